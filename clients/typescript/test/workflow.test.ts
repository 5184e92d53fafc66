// What a workflow host asks of the client: a project's policy applied by
// prune, the fallback to the newest intact state (bytes on disk), and the
// structured diff of a JSON state, against the real binary.

import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Casckpt, CasckptError, type Prune } from "../src/index.js";
import { casckptBin, scratch, writeFiles } from "./helpers.js";

/** A session directory with state.json and a store beside it. */
function session(): { dir: string; store: string } {
  const root = scratch();
  return { dir: join(root, "session"), store: join(root, "store") };
}

/** Snapshots dir with state.json as state; the pack files the snapshot wrote. */
async function step(c: Casckpt, store: string, dir: string, state: string): Promise<{ id: string; packs: string[] }> {
  const packs = () => {
    try {
      return readdirSync(join(store, "packs"));
    } catch {
      return [];
    }
  };
  const before = packs();
  writeFiles(dir, { "state.json": state });
  const s = await c.snapshot(dir);
  assert.equal(s.created, true);
  return { id: s.id!, packs: packs().filter((p) => !before.includes(p)).map((p) => join(store, "packs", p)) };
}

for (const resident of [false, true]) {
  test(`fallback: cat and restore use the newest intact state (resident: ${resident})`, async () => {
    const { dir, store } = session();
    // Every turn in pack files, so that the second turn has packs of its own to damage: by
    // default a small turn's pack is kept in the store's database (an inline pack).
    const c = new Casckpt({ binary: casckptBin(), store, resident, env: { ...process.env, CASCKPT_FILE_PACKS: "1" } });
    try {
      const one = await step(c, store, dir, '{"iteration": 1}\n');
      const two = await step(c, store, dir, '{"iteration": 2}\n');
      const three = await step(c, store, dir, '{"iteration": 3');
      assert.ok(two.packs.length > 0);
      for (const p of two.packs) {
        writeFileSync(p, Buffer.alloc(readFileSync(p).length, 0xde)); // the second state's data is junk
      }
      await assert.rejects(c.cat(dir, "@2", "state.json"), (e: unknown) => e instanceof CasckptError && e.exit === 1);

      const plain = await c.cat(dir, "@1", "state.json", { fallback: true });
      assert.equal(plain.id, three.id);
      assert.deepEqual(plain.tried, []);
      const checked = await c.cat(dir, "@1", "state.json", { fallback: true, check: "json" });
      assert.equal(checked.id, one.id);
      assert.equal(checked.content, '{"iteration": 1}\n');
      assert.deepEqual(checked.tried.map((t) => t.id), [three.id, two.id]);
      assert.match(checked.tried[0]!.reason, /does not parse as JSON/);
      assert.match(checked.tried[1]!.reason, /^damaged: /);

      await assert.rejects(c.restore(dir, "@2"), (e: unknown) => e instanceof CasckptError && e.exit === 1);
      assert.equal(readFileSync(join(dir, "state.json"), "utf8"), '{"iteration": 3', "a refused restore changed the tree");
      const r = await c.restore(dir, "@2", { fallback: true });
      assert.equal(r.restored_to, one.id);
      assert.deepEqual(r.tried?.map((t) => t.id), [two.id]);
      assert.equal(readFileSync(join(dir, "state.json"), "utf8"), '{"iteration": 1}\n');
    } finally {
      await c.close();
    }
  });
}

test("policy: prune drops a completed project after completedDays, not before, and keeps one with cleanup off", async () => {
  const { dir, store } = session();
  const other = join(dir, "..", "debug");
  const c = new Casckpt({ binary: casckptBin(), store, resident: false });
  const t0 = "2026-01-01T10:00:00Z";
  await step(c, store, dir, "{}\n");
  writeFiles(other, { "state.json": "{}\n" });
  await c.snapshot(other, { now: t0 });

  const p = await c.policy(dir, { now: t0, lifecycle: "completed", keep: 3 });
  assert.deepEqual([p.lifecycle, p.keep, p.test, p.cleanup, p.lifecycle_since], ["completed", 3, false, true, t0]);
  const q = await c.policy(other, { now: t0, lifecycle: "completed", cleanup: false });
  assert.deepEqual([q.lifecycle, q.cleanup], ["completed", false]);
  assert.deepEqual(await c.policy(other), q, "policy with no option changed the policy");

  const early = (await c.prune({ now: "2026-01-05T10:00:00Z", completedDays: 7, retentionDays: 0 })) as Prune;
  assert.equal(early.deleted_completed, 0);
  const late = (await c.prune({ now: "2026-01-09T10:00:00Z", completedDays: 7, failedDays: 30, retentionDays: 0 })) as Prune;
  assert.equal(late.deleted_completed, 1);
  assert.deepEqual(late.drops.map((d) => [d.project, d.rule]), [[dir, "completed"]]);
  const status = await c.status();
  assert.deepEqual(status.projects.map((x) => x.workdir), [other]);
});

test("diff semantic: a JSON state's changes by JSONPath", async () => {
  const { dir, store } = session();
  const c = new Casckpt({ binary: casckptBin(), store, resident: false });
  await step(c, store, dir, '{"iteration": 5, "steps": ["Step 5"]}\n');
  await step(c, store, dir, '{"iteration": 7, "steps": ["Step 5", "Step 6"]}\n');
  const d = await c.diff(dir, "@2", { to: "@1", semantic: true });
  assert.deepEqual(d.files.map((f) => [f.path, f.json_changes]), [
    [
      "state.json",
      [
        { path: "$.iteration", op: "changed", from: 5, to: 7 },
        { path: "$.steps[1]", op: "added", to: "Step 6" },
      ],
    ],
  ]);
});
