"""The workflow host's calls against the real binary: restore and read_checkpoint_file with the
fallback to the newest intact copy, project_policy applied by prune_checkpoints, and the semantic
diff of a JSON state."""

import os
from unittest import mock

import casckpt
from tests.test_manager import _Base


class _Session(_Base):
    def setUp(self):
        # Every turn's data in pack files, so that damage() has a turn's own packs to damage: by
        # default a small turn's pack is kept in the store's database (an inline pack).
        patch = mock.patch.dict(os.environ, {"CASCKPT_FILE_PACKS": "1"})
        patch.start()
        self.addCleanup(patch.stop)
        super().setUp()

    def step(self, state: str) -> dict:
        """Write state.json, checkpoint it in a turn of its own; the snapshot and the packs it wrote."""
        packs = self.base / "packs"
        before = set(packs.glob("*.pack")) if packs.exists() else set()
        (self.work / "state.json").write_text(state)
        self.mgr.new_turn()
        self.assertTrue(self.mgr.ensure_checkpoint(str(self.work), "step"))
        return {"id": self.mgr.last_snapshot["id"], "packs": sorted(set(packs.glob("*.pack")) - before)}

    def damage(self, step: dict) -> None:
        self.assertTrue(step["packs"])
        for p in step["packs"]:
            p.write_bytes(b"\xde" * p.stat().st_size)


class TestFallback(_Session):
    def test_restore_fallback_writes_the_newest_intact_state(self):
        one = self.step('{"iteration": 1}\n')
        two = self.step('{"iteration": 2}\n')
        (self.work / "state.json").write_text('{"iteration": 3')
        self.damage(two)
        refused = self.mgr.restore(str(self.work), two["id"])
        self.assertFalse(refused["success"])
        self.assertEqual((self.work / "state.json").read_text(), '{"iteration": 3')
        res = self.mgr.restore(str(self.work), two["id"], fallback=True)
        self.assertTrue(res["success"], res)
        self.assertEqual(res["restored_to"], one["id"][:8])
        self.assertEqual([t["id"] for t in res["tried"]], [two["id"]])
        self.assertTrue(res["tried"][0]["reason"].startswith("damaged: "))
        self.assertEqual((self.work / "state.json").read_text(), '{"iteration": 1}\n')

    def test_read_checkpoint_file_passes_over_damaged_and_unparsable_copies(self):
        one = self.step('{"iteration": 1}\n')
        two = self.step('{"iteration": 2}\n')
        three = self.step('{"iteration": 3')
        self.damage(two)
        read = lambda snap, **kw: casckpt.read_checkpoint_file(str(self.work), snap, "state.json",
                                                               checkpoint_base=self.base, **kw)
        self.assertFalse(read(two["id"])["success"])
        plain = read(three["id"], fallback=True)
        self.assertEqual((plain["id"], plain["content"], plain["tried"]), (three["id"], '{"iteration": 3', []))
        got = read(three["id"], fallback=True, check="json")
        self.assertTrue(got["success"], got)
        self.assertEqual((got["id"], got["content"]), (one["id"], '{"iteration": 1}\n'))
        self.assertEqual([t["id"] for t in got["tried"]], [three["id"], two["id"]])
        self.assertIn("does not parse as JSON", got["tried"][0]["reason"])
        self.damage(one)
        none = read(three["id"], fallback=True, check="json")
        self.assertFalse(none["success"])
        self.assertIn("tried 3 snapshots", none["error"])
        self.assertFalse(read(three["id"], fallback=True, check="yaml")["success"])
        self.assertIn("escapes", casckpt.read_checkpoint_file(str(self.work), one["id"], "../x",
                                                              checkpoint_base=self.base)["error"])


class TestPolicy(_Session):
    def test_prune_drops_a_completed_project_after_completed_days(self):
        other = self.work.parent / "debug"
        other.mkdir()
        (other / "state.json").write_text("{}\n")
        with mock.patch.dict(os.environ, {"CASCKPT_NOW": "2026-01-01T10:00:00Z"}):
            self.step("{}\n")
            self.assertTrue(self.mgr.ensure_checkpoint(str(other), "debug"))
            pol = casckpt.project_policy(str(self.work), lifecycle="completed", keep=3, checkpoint_base=self.base)
            off = casckpt.project_policy(str(other), lifecycle="completed", cleanup=False, checkpoint_base=self.base)
        self.assertEqual((pol["success"], pol["lifecycle"], pol["keep"], pol["test"], pol["cleanup"],
                          pol["lifecycle_since"]), (True, "completed", 3, False, True, "2026-01-01T10:00:00Z"))
        self.assertEqual((off["lifecycle"], off["cleanup"]), ("completed", False))
        self.assertEqual(casckpt.project_policy(str(other), checkpoint_base=self.base), off)
        self.assertFalse(casckpt.project_policy(str(other), lifecycle="done", checkpoint_base=self.base)["success"])
        with mock.patch.dict(os.environ, {"CASCKPT_NOW": "2026-01-05T10:00:00Z"}):
            early = casckpt.prune_checkpoints(retention_days=0, checkpoint_base=self.base)
        self.assertEqual((early["errors"], early["deleted_completed"]), (0, 0))
        with mock.patch.dict(os.environ, {"CASCKPT_NOW": "2026-01-09T10:00:00Z"}):
            late = casckpt.prune_checkpoints(retention_days=0, completed_days=7, failed_days=30,
                                             checkpoint_base=self.base)
        self.assertEqual((late["errors"], late["deleted_completed"]), (0, 1))
        self.assertEqual([(d["project"], d["rule"]) for d in late["drops"]], [(str(self.work), "completed")])
        self.assertEqual([p["workdir"] for p in casckpt.store_status(self.base)["projects"]], [str(other)])


class TestSemanticDiff(_Session):
    def test_diff_semantic_shows_json_values_by_path(self):
        first = self.step('{"iteration": 5, "steps": ["Step 5"]}\n')
        (self.work / "state.json").write_text('{"iteration": 7, "steps": ["Step 5", "Step 6"]}\n')
        d = self.mgr.diff(str(self.work), first["id"], semantic=True)
        self.assertTrue(d["success"], d)
        self.assertIn("~ $.iteration: 5 → 7", d["diff"])
        self.assertIn('+ $.steps[1]: "Step 6"', d["diff"])
        changes = [f["json_changes"] for f in d["files"] if f["path"] == "state.json"]
        self.assertEqual(changes, [[{"path": "$.iteration", "op": "changed", "from": 5, "to": 7},
                                    {"path": "$.steps[1]", "op": "added", "to": "Step 6"}]])
        self.assertNotIn("$.iteration", self.mgr.diff(str(self.work), first["id"])["diff"])
