"""A project whose path is not valid UTF-8 (issue #22, item 17).

casckpt writes each byte of a path that is not part of valid UTF-8 as
\\udcXX in its --json documents, which json.loads reads as the string
os.fsdecode gives for those bytes, so the client can name the project and
its files again. Run against the real binary (CASCKPT_BIN).
"""

import os
import shutil
import tempfile
import unittest
from pathlib import Path

import casckpt
from casckpt import manager as mgr


class TestPathsNotUTF8(unittest.TestCase):
    def setUp(self):
        if mgr._find_binary(None) is None:
            self.skipTest("no casckpt binary: set CASCKPT_BIN")
        tmp = tempfile.mkdtemp(prefix="casckpt-py-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.work = Path(os.fsdecode(os.fsencode(tmp) + b"/proj\xffect"))
        self.work.mkdir()
        self.name = os.fsdecode(b"bad\xffname.txt")
        (self.work / self.name).write_bytes(b"one\n")
        self.mgr = casckpt.CheckpointManager(enabled=True, checkpoint_base=Path(tmp) / "store")

    def test_checkpoint_list_diff_restore(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "first"))
        self.assertEqual(os.fsencode(self.mgr.last_snapshot["project"]), os.fsencode(str(self.work)))
        first = self.mgr.list_checkpoints(str(self.work))
        self.assertEqual(len(first), 1)
        every = self.mgr.list_all_checkpoints()
        self.assertEqual([os.fsencode(c["workdir"]) for c in every], [os.fsencode(str(self.work))])

        (self.work / self.name).write_bytes(b"two\n")
        d = self.mgr.diff(str(self.work), first[0]["hash"])
        self.assertTrue(d["success"], d)
        self.assertEqual([os.fsencode(f["path"]) for f in d["files"]], [b"bad\xffname.txt"])

        r = self.mgr.restore(str(self.work), first[0]["hash"], self.name)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / self.name).read_bytes(), b"one\n")


if __name__ == "__main__":
    unittest.main()
