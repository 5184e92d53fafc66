// Every command through the client, against the real casckpt binary and a
// real store: each result equals the document `casckpt --json` prints for
// the same command line, per process and resident alike.

import assert from "node:assert/strict";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Casckpt } from "../src/index.js";
import { casckptBin, normalize, outcome, reference, scratch, writeFiles, type Outcome } from "./helpers.js";

/** One step of the scenario: the command line, the same call through the client, what to change first. */
interface Step {
  args: (w: string) => string[];
  call: (c: Casckpt, w: string, o: { now: string }) => Promise<unknown>;
  before?: (w: string) => void;
}

/** Every command, in an order that gives each something to show. */
const steps: Step[] = [
  {
    before: (w) => writeFiles(w, { "go.mod": "module x\n", "a.txt": "one\n", "sub/b.txt": "bee\n" }),
    args: (w) => ["snapshot", "-m", "first", "--session", "s1", "--turn", "t1", "--", w],
    call: (c, w, o) => c.snapshot(w, { ...o, message: "first", session: "s1", turn: "t1" }),
  },
  {
    before: (w) => writeFiles(w, { "a.txt": "one\ntwo\n", "c.txt": "sea\n" }),
    args: (w) => ["snapshot", "--session", "s1", "--turn", "t1", "--end-turn", "--", w],
    call: (c, w, o) => c.snapshot(w, { ...o, session: "s1", turn: "t1", endTurn: true }),
  },
  {
    before: (w) => writeFiles(w, { "d.txt": "dee\n" }),
    args: (w) => ["record-write", "--", w, "d.txt"],
    call: (c, w, o) => c.recordWrite(w, ["d.txt"], o),
  },
  { args: (w) => ["snapshot", "-m", "-starts with a dash", "--", w], call: (c, w, o) => c.snapshot(w, { ...o, message: "-starts with a dash" }) },
  { args: (w) => ["list", "--", w], call: (c, w, o) => c.list(w, o) },
  { args: (w) => ["list", "-n", "1", "--session", "s1", "--", w], call: (c, w, o) => c.list(w, { ...o, n: 1, session: "s1" }) },
  { args: (w) => ["turns", "--", w], call: (c, w, o) => c.turns(w, o) },
  { args: (w) => ["diff", "--", w, "@3"], call: (c, w, o) => c.diff(w, "@3", o) },
  { args: (w) => ["diff", "--patch", "--", w, "@3", "@2"], call: (c, w, o) => c.diff(w, "@3", { ...o, to: "@2", patch: true }) },
  { args: (w) => ["cat", "--", w, "@1", "a.txt"], call: (c, w, o) => c.cat(w, "@1", "a.txt", o) },
  { args: (w) => ["ls", "--", w, "@1"], call: (c, w, o) => c.ls(w, "@1", o) },
  { args: (w) => ["ls", "--", w, "@1", "sub"], call: (c, w, o) => c.ls(w, "@1", { ...o, path: "sub" }) },
  { args: (w) => ["log", "--", w, "a.txt"], call: (c, w, o) => c.log(w, "a.txt", o) },
  { args: (w) => ["pin", "--", w, "@2"], call: (c, w, o) => c.pin(w, "@2", o) },
  { args: (w) => ["unpin", "--", w, "@2"], call: (c, w, o) => c.unpin(w, "@2", o) },
  { args: (w) => ["restore", "--dry-run", "--", w, "@3"], call: (c, w, o) => c.restore(w, "@3", { ...o, dryRun: true }) },
  {
    before: (w) => writeFiles(w, { "a.txt": "a person's edit\n" }),
    args: (w) => ["restore", "--safe", "--", w, "#1"],
    call: (c, w, o) => c.restore(w, "#1", { ...o, safe: true }),
  },
  { args: (w) => ["restore", "--", w, "#1", "a.txt"], call: (c, w, o) => c.restore(w, "#1", { ...o, paths: ["a.txt"] }) },
  { args: (w) => ["undo", "--dry-run", "--", w], call: (c, w, o) => c.undo(w, { ...o, dryRun: true }) },
  { args: (w) => ["undo", "--", w, "t1"], call: (c, w, o) => c.undo(w, { ...o, turn: "t1" }) },
  { args: (w) => ["forget", "--", w, "#3"], call: (c, w, o) => c.forget(w, ["#3"], o) },
  { args: (w) => ["forget", "--dry-run", "--", w, "#3"], call: (c, w, o) => c.forget(w, ["#3"], { ...o, dryRun: true }) },
  { args: () => ["status"], call: (c, _, o) => c.status(o) },
  { args: () => ["prune", "--retention-days", "1", "--dry-run"], call: (c, _, o) => c.prune({ ...o, retentionDays: 1, dryRun: true }) },
  { args: () => ["prune", "--auto"], call: (c, _, o) => c.prune({ ...o, auto: true }) },
  { args: () => ["prune", "--auto"], call: (c, _, o) => c.prune({ ...o, auto: true }) },
  { args: () => ["gc"], call: (c, _, o) => c.gc(o) },
  { args: () => ["verify"], call: (c, _, o) => c.verify(o) },
  {
    before: (w) => writeFiles(w, { ".tox/py/x": "tox\n", "sub/.tox/y": "y\n", "c.txt": "sea\n" }),
    args: (w) => ["snapshot", "--exclude", ".tox/", "--exclude", "-dash", "--max-dir-files", "200", "--", w],
    call: (c, w, o) => c.snapshot(w, { ...o, exclude: [".tox/", "-dash"], maxDirFiles: 200 }),
  },
  { args: (w) => ["ls", "--", w, "@1"], call: (c, w, o) => c.ls(w, "@1", o) },
  // Workflow hosts: policy, prune's lifecycle rules, fallback, the semantic diff.
  { args: (w) => ["policy", "--", w], call: (c, w, o) => c.policy(w, o) },
  {
    args: (w) => ["policy", "--lifecycle", "completed", "--test", "--retention-days", "3", "--keep", "5", "--no-cleanup", "--", w],
    call: (c, w, o) => c.policy(w, { ...o, lifecycle: "completed", test: true, retentionDays: 3, keep: 5, cleanup: false }),
  },
  {
    args: (w) => ["policy", "--no-test", "--retention-days", "0", "--cleanup", "--", w],
    call: (c, w, o) => c.policy(w, { ...o, test: false, retentionDays: 0, cleanup: true }),
  },
  {
    args: () => ["prune", "--dry-run", "--completed-days", "1", "--failed-days", "2"],
    call: (c, _, o) => c.prune({ ...o, dryRun: true, completedDays: 1, failedDays: 2 }),
  },
  {
    before: (w) => writeFiles(w, { "state.json": '{"iteration": 5, "steps": ["a"]}\n' }),
    args: (w) => ["snapshot", "--", w],
    call: (c, w, o) => c.snapshot(w, o),
  },
  {
    before: (w) => writeFiles(w, { "state.json": '{"iteration": 7, "steps": ["a", "b"]' }),
    args: (w) => ["snapshot", "--", w],
    call: (c, w, o) => c.snapshot(w, o),
  },
  {
    args: (w) => ["cat", "--fallback", "--check", "json", "--", w, "@1", "state.json"],
    call: (c, w, o) => c.cat(w, "@1", "state.json", { ...o, fallback: true, check: "json" }),
  },
  { args: (w) => ["restore", "--fallback", "--", w, "@2"], call: (c, w, o) => c.restore(w, "@2", { ...o, fallback: true }) },
  {
    before: (w) => writeFiles(w, { "state.json": '{"iteration": 8, "steps": ["a", "b"]}\n' }),
    args: (w) => ["diff", "--semantic", "--", w, "@2"],
    call: (c, w, o) => c.diff(w, "@2", { ...o, semantic: true }),
  },
  // Failures: refused (exit 1) and misused (exit 2).
  { args: (w) => ["restore", "--", w, "@99"], call: (c, w, o) => c.restore(w, "@99", o) },
  { args: (w) => ["list", "-n", "-1", "--", w], call: (c, w, o) => c.list(w, { ...o, n: -1 }) },
  { args: () => ["gc", "extra"], call: (c, _, o) => c.run(["gc", "extra"], o) },
];

/** Runs the scenario in a fresh work/store under root, each step through run; the outcomes, normalized. */
async function scenario(root: string, run: (s: Step, w: string, now: string) => Promise<Outcome> | Outcome): Promise<unknown> {
  rmSync(root, { recursive: true, force: true });
  const w = join(root, "work");
  mkdirSync(w, { recursive: true });
  const got: Outcome[] = [];
  for (const [i, s] of steps.entries()) {
    s.before?.(w);
    got.push(await run(s, w, `2026-01-01T10:${String(i).padStart(2, "0")}:00Z`));
  }
  return normalize(got);
}

test("every command gives the document casckpt --json prints, per process and resident", async () => {
  const bin = casckptBin();
  const root = join(scratch(), "sandbox");
  const store = join(root, "store");
  const want = await scenario(root, (s, w, now) => reference(bin, store, w, s.args(w), now));

  const perProcess = new Casckpt({ binary: bin, store, resident: false });
  assert.deepEqual(await scenario(root, (s, w, now) => outcome(() => s.call(perProcess, w, { now }))), want);
  assert.equal(perProcess.mode, "process");

  const resident = new Casckpt({ binary: bin, store });
  try {
    assert.deepEqual(await scenario(root, (s, w, now) => outcome(() => s.call(resident, w, { now }))), want);
  } finally {
    await resident.close();
  }
});
