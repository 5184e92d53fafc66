"""Which casckpt program the client runs: ``binary=``, else $CASCKPT_BIN, else
the one a platform wheel carries (casckpt/_bin), else ``casckpt`` on PATH."""

import os
import shutil
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from casckpt import _binary
from casckpt import manager as mgr


class TestFindBinary(unittest.TestCase):
    def setUp(self):
        tmp = Path(tempfile.mkdtemp(prefix="casckpt-py-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        self.explicit, self.env, self.on_path = (self._exe(tmp / d) for d in ("explicit", "env", "path"))
        self.pkg = tmp / "pkg"
        self.bundled = self._exe(self.pkg / "_bin")
        (self.pkg / "_binary.py").write_text("")
        env = {"PATH": str(self.on_path.parent)}
        patch = mock.patch.dict(os.environ, env, clear=True)
        patch.start()
        self.addCleanup(patch.stop)

    @staticmethod
    def _exe(d: Path) -> Path:
        d.mkdir(parents=True)
        p = d / ("casckpt.exe" if os.name == "nt" else "casckpt")
        p.write_text("#!/bin/sh\n")
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
        return p

    def _with_bundle(self):
        return mock.patch.object(_binary, "__file__", str(self.pkg / "_binary.py"))

    def test_order(self):
        with self._with_bundle():
            self.assertEqual(_binary.bundled(), str(self.bundled.resolve()))
            self.assertEqual(mgr._find_binary(str(self.explicit)), str(self.explicit))
            os.environ["CASCKPT_BIN"] = str(self.env)
            self.assertEqual(mgr._find_binary(None), str(self.env))
            del os.environ["CASCKPT_BIN"]
            self.assertEqual(mgr._find_binary(None), str(self.bundled.resolve()))
        self.assertIsNone(_binary.bundled())  # a source checkout carries none
        self.assertEqual(mgr._find_binary(None), str(self.on_path))


if __name__ == "__main__":
    unittest.main()
