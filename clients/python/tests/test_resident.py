"""The resident path: a CheckpointManager runs its calls through one ``casckpt serve``.

Every test of test_manager runs through it (managers are resident by default); here the same
tests run again with a process per call, and the resident process's own behaviour is checked:
the same results as per process, one process for many calls, the fallback for a binary without
``serve``, a server that dies, and the process ending with close(), ``with`` and garbage
collection.
"""

import gc
import os
import shutil
import stat
import tempfile
import unittest
from pathlib import Path

import casckpt
from casckpt import manager as mgr
from tests import test_manager


def _per_process(cls):
    """``cls`` (a test_manager test case) with managers that run a process per call."""

    def manager(self, **kw):
        kw.setdefault("resident", False)
        return cls.manager(self, **kw)

    return type(cls.__name__ + "PerProcess", (cls,), {"manager": manager})


for _name, _cls in list(vars(test_manager).items()):
    if isinstance(_cls, type) and issubclass(_cls, test_manager._Base) and _cls is not test_manager._Base:
        globals()[_name + "PerProcess"] = _per_process(_cls)


def _served(m: casckpt.CheckpointManager):
    """The manager's running serve process (its Popen), or None."""
    proc = m._runner.resident._holder[0]
    return None if proc is None else proc.popen


class TestResident(test_manager._Base):
    def _script(self, body: str) -> str:
        """An executable shell script that runs ``body`` with $REAL the real binary."""
        path = Path(tempfile.mkdtemp(prefix="casckpt-py-bin-")) / "casckpt"
        self.addCleanup(shutil.rmtree, path.parent, True)
        real = mgr._find_binary(None)
        path.write_text(f"#!/bin/sh\nREAL='{real}'\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    def _history(self, m):
        """Two turns of changes in self.work through ``m``."""
        self.assertTrue(m.ensure_checkpoint(str(self.work), "first"))
        m.new_turn()
        (self.work / "main.py").write_text("print('v2')\n")
        m.record_agent_write(str(self.work / "main.py"))
        self.assertTrue(m.ensure_checkpoint(str(self.work), "second"))

    def test_same_results_as_a_process_per_call(self):
        self._history(self.mgr)
        per = self.manager(resident=False)
        self.assertIsNone(per._runner.resident)
        cps = self.mgr.list_checkpoints(str(self.work))
        self.assertEqual(cps, per.list_checkpoints(str(self.work)))
        self.assertEqual(len(cps), 2)
        for m in (self.mgr, per):
            m.new_turn()
        self.assertEqual(self.mgr.diff(str(self.work), cps[1]["hash"]), per.diff(str(self.work), cps[1]["hash"]))
        self.assertEqual(self.mgr.list_all_checkpoints(), per.list_all_checkpoints())
        self.assertEqual(self.mgr.get_working_dir_for_path(str(self.work / "main.py")),
                         per.get_working_dir_for_path(str(self.work / "main.py")))
        self.assertEqual(self.mgr.restore(str(self.work), "abcdef12"), per.restore(str(self.work), "abcdef12"))
        self.assertEqual(self.mgr._runner.run("diff", "--", str(self.work), "@9"),
                         per._runner.run("diff", "--", str(self.work), "@9"))
        self.assertEqual(self.mgr._runner.run("list", "--no-such-flag"), per._runner.run("list", "--no-such-flag"))
        restored = self.mgr.restore(str(self.work), cps[1]["hash"])
        self.assertTrue(restored["success"], restored)
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")

    def test_one_process_for_many_calls(self):
        self.mgr.ensure_checkpoint(str(self.work), "first")
        first = _served(self.mgr)
        self.assertIsNotNone(first)
        for _ in range(3):
            self.mgr.list_checkpoints(str(self.work))
        self.assertIs(_served(self.mgr), first)
        self.assertIsNone(first.poll())

    def test_now_travels_with_each_call(self):
        os.environ["CASCKPT_NOW"] = "2001-02-03T04:05:06Z"
        try:
            self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "then"))
        finally:
            del os.environ["CASCKPT_NOW"]
        self.mgr.new_turn()
        (self.work / "main.py").write_text("print('now')\n")
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "now"))
        times = [c["time"] for c in self.mgr.list_checkpoints(str(self.work))]
        self.assertEqual(times[1], "2001-02-03T04:05:06Z")
        self.assertNotEqual(times[0], times[1])

    def test_binary_without_serve_runs_a_process_per_call(self):
        script = self._script('for a; do [ "$a" = serve ] && { echo "casckpt: unknown command \\"serve\\"" >&2; exit 2; }; done\n'
                              'exec "$REAL" "$@"')
        m = self.manager(binary=script)
        self._history(m)
        self.assertTrue(m._runner.resident.unavailable)
        self.assertEqual([c["reason"] for c in m.list_checkpoints(str(self.work))], ["second", "first"])
        self.assertIsNone(_served(m))

    def test_a_server_that_dies_is_started_again(self):
        self.mgr.ensure_checkpoint(str(self.work), "first")
        first = _served(self.mgr)
        first.kill()
        first.wait()
        self.assertEqual(len(self.mgr.list_checkpoints(str(self.work))), 1)
        second = _served(self.mgr)
        self.assertIsNotNone(second)
        self.assertIsNot(second, first)
        self.assertIsNone(second.poll())

    def test_a_server_that_dies_in_a_call_falls_back(self):
        # serve reads the request and exits 1 without answering: each call runs as a process.
        script = self._script('for a; do [ "$a" = serve ] && { read line; exit 1; }; done\nexec "$REAL" "$@"')
        m = self.manager(binary=script)
        self._history(m)
        self.assertFalse(m._runner.resident.unavailable)
        self.assertEqual([c["reason"] for c in m.list_checkpoints(str(self.work))], ["second", "first"])

    def test_close_with_and_garbage_collection_end_the_process(self):
        self.mgr.ensure_checkpoint(str(self.work), "first")
        proc = _served(self.mgr)
        self.mgr.close()
        self.assertEqual(proc.returncode, 0)
        self.assertIsNone(_served(self.mgr))
        self.assertEqual(len(self.mgr.list_checkpoints(str(self.work))), 1)  # starts another
        with self.manager() as m:
            m.list_checkpoints(str(self.work))
            proc = _served(m)
        self.assertEqual(proc.returncode, 0)
        m = self.manager()
        m.list_checkpoints(str(self.work))
        proc = _served(m)
        del m
        gc.collect()
        self.assertEqual(proc.returncode, 0)


if __name__ == "__main__":
    unittest.main()
