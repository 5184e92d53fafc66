"""Hermes' behavioural tests of CheckpointManager, ported to the casckpt client.

Run against the real binary: CASCKPT_BIN names it (the Go test in cmd/casckpt sets it).
"""

import fcntl
import os
import shutil
import tempfile
import unittest
from pathlib import Path

import casckpt
from casckpt import manager as mgr


def _need_binary(case: unittest.TestCase) -> None:
    if mgr._find_binary(None) is None:
        case.skipTest("no casckpt binary: set CASCKPT_BIN")


class _Base(unittest.TestCase):
    def setUp(self):
        _need_binary(self)
        tmp = tempfile.mkdtemp(prefix="casckpt-py-")
        self.addCleanup(shutil.rmtree, tmp, True)
        self.base = Path(tmp) / "store"
        self.work = Path(tmp) / "project"
        self.work.mkdir()
        (self.work / "main.py").write_text("print('hello')\n")
        (self.work / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        self.mgr = self.manager()

    def manager(self, **kw):
        kw.setdefault("enabled", True)
        return casckpt.CheckpointManager(checkpoint_base=self.base, **kw)


class TestTakeAndList(_Base):
    def test_disabled_takes_nothing(self):
        m = self.manager(enabled=False)
        self.assertFalse(m.ensure_checkpoint(str(self.work), "test"))
        self.assertEqual(m.list_checkpoints(str(self.work)), [])

    def test_listing_is_newest_first_with_hermes_keys(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "first"))
        self.mgr.new_turn()
        (self.work / "main.py").write_text("print('v2')\n")
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "second"))
        cps = self.mgr.list_checkpoints(str(self.work))
        self.assertEqual([c["reason"] for c in cps], ["second", "first"])
        for key in ("hash", "short_hash", "timestamp", "reason", "files_changed", "insertions", "deletions"):
            self.assertIn(key, cps[0])
        self.assertEqual(cps[0]["files_changed"], 1)
        self.assertEqual(cps[0]["turn"], self.mgr.turn_id)
        self.assertEqual(cps[0]["session"], self.mgr.session_id)
        self.assertTrue(self.mgr.last_snapshot["created"])
        self.assertEqual(self.mgr.last_snapshot["id"], cps[0]["hash"])

    def test_dedup_per_turn(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "first"))
        (self.work / "main.py").write_text("changed\n")
        self.assertFalse(self.mgr.ensure_checkpoint(str(self.work), "same turn"))
        self.mgr.new_turn()
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "next turn"))
        self.assertEqual(len(self.mgr.list_checkpoints(str(self.work))), 2)

    def test_unchanged_tree_takes_nothing(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "first"))
        self.mgr.new_turn()
        self.assertFalse(self.mgr.ensure_checkpoint(str(self.work), "nothing changed"))
        self.assertEqual(len(self.mgr.list_checkpoints(str(self.work))), 1)

    def test_never_root_or_home(self):
        self.assertFalse(self.mgr.ensure_checkpoint("/", "root"))
        self.assertFalse(self.mgr.ensure_checkpoint(str(Path.home()), "home"))

    def test_keep_max_snapshots(self):
        m = self.manager(max_snapshots=3)
        for i in range(5):
            m.new_turn()
            (self.work / "main.py").write_text(f"v{i}\n")
            self.assertTrue(m.ensure_checkpoint(str(self.work), f"cp{i}"))
        cps = m.list_checkpoints(str(self.work))
        self.assertEqual([c["reason"] for c in cps], ["cp4", "cp3", "cp2"])

    def test_file_size_cap_leaves_big_files_out(self):
        m = self.manager(max_file_size_mb=1)
        (self.work / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
        self.assertTrue(m.ensure_checkpoint(str(self.work), "with big file"))
        cp = m.list_checkpoints(str(self.work))[0]
        diff = m.diff(str(self.work), cp["hash"])
        self.assertTrue(diff["success"], diff)
        (self.work / "big.bin").unlink()
        self.assertTrue(m.restore(str(self.work), cp["hash"])["success"])
        self.assertFalse((self.work / "big.bin").exists(), "an oversize file came back from a checkpoint")
        (self.work / "big.bin").write_bytes(b"y" * (2 * 1024 * 1024))
        m.record_agent_write(str(self.work / "big.bin"))
        self.assertTrue(m.restore(str(self.work), cp["hash"], safe=True)["success"])
        self.assertTrue((self.work / "big.bin").exists(), "restore deleted an oversize file no checkpoint holds")
        self.assertTrue(m.restore(str(self.work), cp["hash"])["success"])
        self.assertTrue((self.work / "big.bin").exists(), "restore deleted an oversize file no checkpoint holds")

    def test_list_all_checkpoints_labels_workdirs(self):
        other = self.work.parent / "other"
        other.mkdir()
        (other / "a.txt").write_text("a\n")
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "one"))
        self.assertTrue(self.mgr.ensure_checkpoint(str(other), "two"))
        every = self.mgr.list_all_checkpoints()
        self.assertEqual(sorted(c["workdir"] for c in every), sorted([str(self.work.resolve()), str(other.resolve())]))
        text = casckpt.format_checkpoint_list(every, "all directories")
        self.assertIn("[other]", text)
        self.assertIn("No checkpoints found for x", casckpt.format_checkpoint_list([], "x"))


class TestDiffAndRestore(_Base):
    def _first(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "initial"))
        return self.mgr.list_checkpoints(str(self.work))[0]["hash"]

    def test_diff_shows_change(self):
        h = self._first()
        (self.work / "main.py").write_text("print('changed')\n")
        d = self.mgr.diff(str(self.work), h)
        self.assertTrue(d["success"], d)
        self.assertIn("main.py", d["stat"])
        self.assertIn("+print('changed')", d["diff"])
        s = self.mgr.session_diff(str(self.work))
        self.assertEqual(s["baseline"], h)

    def test_session_diff_without_checkpoints_is_empty(self):
        self.assertEqual(self.mgr.session_diff(str(self.work))["empty"], True)

    def test_restore_brings_back_content(self):
        h = self._first()
        (self.work / "main.py").write_text("broken\n")
        r = self.mgr.restore(str(self.work), h)
        self.assertTrue(r["success"], r)
        self.assertEqual(r["restored_to"], h[:8])
        self.assertEqual(r["reason"], "initial")
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        reasons = [c["reason"] for c in self.mgr.list_checkpoints(str(self.work))]
        self.assertTrue(reasons[0].startswith("pre-restore"), reasons)

    def test_restore_one_file(self):
        h = self._first()
        (self.work / "main.py").write_text("broken\n")
        (self.work / "pyproject.toml").write_text("kept\n")
        r = self.mgr.restore(str(self.work), h, file_path="main.py")
        self.assertTrue(r["success"], r)
        self.assertEqual(r["file"], "main.py")
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        self.assertEqual((self.work / "pyproject.toml").read_text(), "kept\n")

    def test_restore_one_file_named_like_a_flag(self):
        (self.work / "-x.py").write_text("dash\n")
        h = self._first()
        (self.work / "main.py").write_text("broken\n")
        (self.work / "-x.py").write_text("dash broken\n")
        r = self.mgr.restore(str(self.work), h, file_path="--safe")
        self.assertFalse(r["success"], r)  # no file "--safe" in the checkpoint; never a safe restore of the tree
        self.assertEqual((self.work / "main.py").read_text(), "broken\n")
        r = self.mgr.restore(str(self.work), h, file_path="-x.py")
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "-x.py").read_text(), "dash\n")
        self.assertEqual((self.work / "main.py").read_text(), "broken\n")

    def test_restore_unknown_hash(self):
        self._first()
        r = self.mgr.restore(str(self.work), "deadbeef1234")
        self.assertFalse(r["success"])
        self.assertIn("not found", r["error"])
        self.assertFalse(self.mgr.diff(str(self.work), "deadbeef1234")["success"])

    def test_restore_rejects_bad_input(self):
        h = self._first()
        for bad in ("", "--patch", "xyz!"):
            self.assertFalse(self.mgr.restore(str(self.work), bad)["success"], bad)
        for bad in ("/etc/passwd", "../outside"):
            self.assertFalse(self.mgr.restore(str(self.work), h, file_path=bad)["success"], bad)

    def test_safe_restore_keeps_user_edit_and_deletes_agent_file(self):
        h = self._first()
        self.mgr.new_turn()
        self.assertFalse(self.mgr.ensure_checkpoint(str(self.work), "agent turn"))
        (self.work / "main.py").write_text("agent wrote\n")
        self.mgr.record_agent_write(str(self.work / "main.py"))
        (self.work / "new.py").write_text("agent created\n")
        self.mgr.record_agent_write(str(self.work / "new.py"))
        self.assertEqual(self.mgr.last_write, {"recorded": 1})
        (self.work / "pyproject.toml").write_text("user edit\n")  # never an agent's
        r = self.mgr.restore(str(self.work), h, safe=True)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        self.assertFalse((self.work / "new.py").exists())
        self.assertEqual((self.work / "pyproject.toml").read_text(), "user edit\n")
        self.assertEqual(sorted(r["restored_files"]), ["main.py", "new.py"])
        self.assertEqual(r["skipped_user_edits"], ["pyproject.toml"])

    def test_safe_restore_keeps_file_user_edited_after_agent_write(self):
        h = self._first()
        (self.work / "main.py").write_text("agent wrote\n")
        self.mgr.record_agent_write(str(self.work / "main.py"))
        (self.work / "main.py").write_text("user changed it after\n")
        r = self.mgr.restore(str(self.work), h, safe=True)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "main.py").read_text(), "user changed it after\n")
        self.assertIn("main.py", r["skipped_user_edits"])

    def test_safe_restore_restores_agent_deleted_file(self):
        # Hermes' own test: a file gone since the agent wrote it comes back.
        h = self._first()
        self.mgr.new_turn()
        (self.work / "main.py").write_text("agent version\n")
        self.mgr.record_agent_write(str(self.work / "main.py"))
        (self.work / "main.py").unlink()
        (self.work / "pyproject.toml").write_text("user edit\n")
        r = self.mgr.restore(str(self.work), h, safe=True)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        self.assertEqual((self.work / "pyproject.toml").read_text(), "user edit\n")
        self.assertEqual(r["restored_files"], ["main.py"])

    def test_record_agent_write_of_a_deleted_file_records_the_deletion(self):
        h = self._first()
        self.mgr.new_turn()
        (self.work / "main.py").unlink()  # the agent deletes it
        self.mgr.record_agent_write(str(self.work / "main.py"))
        self.assertEqual(self.mgr.last_write, {"recorded": 1})
        (self.work / "pyproject.toml").write_text("user edit\n")
        r = self.mgr.restore(str(self.work), h, safe=True)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        self.assertEqual((self.work / "pyproject.toml").read_text(), "user edit\n")
        self.assertEqual(r["restored_files"], ["main.py"])

    def test_safe_restore_after_end_turn_without_recorded_writes(self):
        h = self._first()
        self.mgr.new_turn()
        self.assertFalse(self.mgr.ensure_checkpoint(str(self.work), "turn 2"))
        (self.work / "main.py").write_text("agent turn 2\n")
        self.mgr.end_turn()
        (self.work / "pyproject.toml").write_text("user edit again\n")
        r = self.mgr.restore(str(self.work), h, safe=True)
        self.assertTrue(r["success"], r)
        self.assertEqual((self.work / "main.py").read_text(), "print('hello')\n")
        self.assertEqual((self.work / "pyproject.toml").read_text(), "user edit again\n")
        self.assertIn("pyproject.toml", r["skipped_user_edits"])

    def test_working_dir_for_path_finds_marker(self):
        sub = self.work / "pkg"
        sub.mkdir()
        (sub / "mod.py").write_text("x\n")
        self.assertEqual(self.mgr.get_working_dir_for_path(str(sub / "mod.py")), str(self.work.resolve()))


class TestNeverRaises(_Base):
    def test_missing_binary(self):
        m = casckpt.CheckpointManager(enabled=True, checkpoint_base=self.base, binary="/nonexistent/casckpt")
        self.assertFalse(m.ensure_checkpoint(str(self.work), "x"))
        m.record_agent_write(str(self.work / "main.py"))
        self.assertEqual(m.list_checkpoints(str(self.work)), [])
        self.assertEqual(m.list_all_checkpoints(), [])
        self.assertFalse(m.diff(str(self.work), "abcd")["success"])
        self.assertFalse(m.restore(str(self.work), "abcd")["success"])
        self.assertEqual(m.get_working_dir_for_path(str(self.work / "main.py")), str(self.work.resolve()))
        bad = "/nonexistent/casckpt"
        self.assertEqual(casckpt.prune_checkpoints(checkpoint_base=self.base, binary=bad)["errors"], 1)
        self.assertIn("error", casckpt.maybe_auto_prune_checkpoints(checkpoint_base=self.base, binary=bad))
        self.assertEqual(casckpt.store_status(checkpoint_base=self.base, binary=bad)["projects"], [])
        self.assertFalse(casckpt.clear_all(checkpoint_base=self.base, binary=bad)["deleted"])

    def test_busy_store(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "first"))
        lock = self.base / "lock"
        self.assertTrue(lock.exists(), list(self.base.iterdir()))
        with open(lock, "rb+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            m = self.manager(timeout=1)
            (self.work / "main.py").write_text("changed\n")
            self.assertFalse(m.ensure_checkpoint(str(self.work), "busy"))
            m.record_agent_write(str(self.work / "main.py"))
            self.assertFalse(m.restore(str(self.work), "abcd")["success"])
            self.assertIsInstance(m.list_checkpoints(str(self.work)), list)
        self.assertTrue(m.ensure_checkpoint(str(self.work), "free again") or m.new_turn() is None)


class TestMaintenance(_Base):
    def test_status_prune_clear(self):
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "one"))
        st = casckpt.store_status(checkpoint_base=self.base)
        self.assertEqual(st["project_count"], 1)
        p = st["projects"][0]
        self.assertEqual(p["workdir"], str(self.work.resolve()))
        self.assertTrue(p["exists"])
        self.assertEqual(p["commits"], 1)
        self.assertIsInstance(p["last_touch"], float)
        self.assertGreater(st["store_size_bytes"], 0)

        first = casckpt.maybe_auto_prune_checkpoints(checkpoint_base=self.base)
        self.assertFalse(first["skipped"], first)
        self.assertIn("result", first)
        self.assertTrue(casckpt.maybe_auto_prune_checkpoints(checkpoint_base=self.base)["skipped"])

        res = casckpt.prune_checkpoints(checkpoint_base=self.base)
        self.assertEqual(res["deleted_orphan"], 0)
        self.assertEqual(res["errors"], 0)
        self.assertEqual(len(self.mgr.list_checkpoints(str(self.work))), 1)

        shutil.rmtree(self.work)
        res = casckpt.prune_checkpoints(checkpoint_base=self.base, orphan_allowlist=set())
        self.assertEqual(res["deleted_orphan"], 0, "an orphan outside the allowlist was deleted")
        res = casckpt.prune_checkpoints(checkpoint_base=self.base, orphan_allowlist={p["hash"]})
        self.assertEqual(res["deleted_orphan"], 1)

        cleared = casckpt.clear_all(checkpoint_base=self.base)
        self.assertTrue(cleared["deleted"])
        self.assertGreater(cleared["bytes_freed"], 0)
        self.assertFalse(self.base.exists())
        # As Hermes: a second clear finds no store and deletes nothing.
        again = casckpt.clear_all(checkpoint_base=self.base)
        self.assertFalse(again["deleted"], again)
        self.assertEqual(again["bytes_freed"], 0)


if __name__ == "__main__":
    unittest.main()
