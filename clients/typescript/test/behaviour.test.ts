// What the client does besides giving documents: bytes on disk, typed
// errors, the plain functions, where it finds the binary, and its
// fallback from a resident server to a process per call.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as casckpt from "../src/index.js";
import { Casckpt, CasckptError, findBinary, type Restore, type Snapshot } from "../src/index.js";
import { casckptBin, scratch, writeFiles } from "./helpers.js";

/** A fresh project with a.txt, and a store beside it. */
function project(): { dir: string; store: string } {
  const root = scratch();
  const dir = join(root, "work");
  writeFiles(dir, { "a.txt": "one\n" });
  return { dir, store: join(root, "store") };
}

for (const resident of [false, true]) {
  test(`restore and undo change the bytes on disk (resident: ${resident})`, async () => {
    const { dir, store } = project();
    const c = new Casckpt({ binary: casckptBin(), store, resident });
    try {
      const first: Snapshot = await c.snapshot(dir, { session: "s", turn: "t1" });
      assert.equal(first.created, true);
      writeFileSync(join(dir, "a.txt"), "agent\n");
      await c.snapshot(dir, { session: "s", turn: "t1", endTurn: true });
      const undo = await c.undo(dir);
      assert.deepEqual(undo.reverted, ["a.txt"]);
      assert.equal(readFileSync(join(dir, "a.txt"), "utf8"), "one\n");
      writeFileSync(join(dir, "b.txt"), "new\n");
      const r: Restore = await c.restore(dir, first.id!, { dryRun: true });
      assert.deepEqual(r.changes, [{ path: "b.txt", action: "delete" }]);
      assert.equal(readFileSync(join(dir, "b.txt"), "utf8"), "new\n", "a dry run changed the tree");
      await c.restore(dir, first.id!);
      assert.throws(() => readFileSync(join(dir, "b.txt")), { code: "ENOENT" });
    } finally {
      await c.close();
    }
  });

  test(`a failure throws CasckptError with the exit status and the one line (resident: ${resident})`, async () => {
    const { dir, store } = project();
    const c = new Casckpt({ binary: casckptBin(), store, resident });
    try {
      await assert.rejects(c.restore(dir, "@9"), (e: unknown) => {
        assert.ok(e instanceof CasckptError);
        assert.equal(e.exit, 1);
        assert.match(e.message, /^snapshot @9: not found/);
        assert.deepEqual(e.args, ["restore", "--", dir, "@9"]);
        return true;
      });
      await assert.rejects(c.run(["pin", "--", dir, "@1", "@2"]), (e: unknown) => {
        assert.ok(e instanceof CasckptError);
        assert.equal(e.exit, 2);
        assert.match(e.message, /^pin /);
        return true;
      });
    } finally {
      await c.close();
    }
  });
}

test("the plain functions run a process per call", async () => {
  const { dir, store } = project();
  const o = { binary: casckptBin(), store };
  const s = await casckpt.snapshot(dir, { ...o, message: "plain" });
  const list = await casckpt.list(dir, o);
  assert.deepEqual(list.map((x) => [x.id, x.reason]), [[s.id, "plain"]]);
  const cat = await casckpt.cat(dir, "@1", "a.txt", o);
  assert.equal(cat.content, "one\n");
  const st = await casckpt.status(o);
  assert.equal(st.projects.length, 1);
  await assert.rejects(casckpt.forget(dir, ["@7"], o), (e: unknown) => e instanceof CasckptError && e.exit === 1);
});

test("relative paths resolve against cwd", async () => {
  const { dir, store } = project();
  for (const resident of [false, true]) {
    const c = new Casckpt({ binary: casckptBin(), store, cwd: dir, resident });
    try {
      const s = await c.snapshot(".", { message: `resident ${resident}` });
      assert.equal(s.project, dir);
    } finally {
      await c.close();
    }
  }
});

test("the binary: the option, then CASCKPT_BIN, then PATH; none is exit 127", async () => {
  const bin = casckptBin();
  const other = join(scratch(), "casckpt");
  symlinkSync(bin, other);
  assert.equal(findBinary(bin, { CASCKPT_BIN: other, PATH: "" }), bin);
  assert.equal(findBinary(undefined, { CASCKPT_BIN: other, PATH: "" }), other);
  const pathDir = join(scratch(), "bin");
  mkdirSync(pathDir);
  symlinkSync(bin, join(pathDir, "casckpt"));
  assert.equal(findBinary(undefined, { PATH: pathDir }), join(pathDir, "casckpt"));
  assert.equal(findBinary(undefined, { PATH: "" }), undefined);
  assert.equal(findBinary(join(scratch(), "nothing"), {}), undefined);

  const c = new Casckpt({ env: { PATH: "" } });
  await assert.rejects(c.status(), (e: unknown) => e instanceof CasckptError && e.exit === 127 && /CASCKPT_BIN/.test(e.message));
});

/** A casckpt of before serve: the real binary, but `serve` is an unknown command (exit 2). */
function oldBinary(): string {
  const path = join(scratch(), "old-casckpt");
  writeFileSync(
    path,
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = serve ]; then echo 'casckpt: unknown command "serve" for "casckpt"' >&2; exit 2; fi; done\nexec '${casckptBin()}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

test("a binary without serve: the client falls back to a process per call", async () => {
  const { dir, store } = project();
  const c = new Casckpt({ binary: oldBinary(), store });
  try {
    assert.equal(c.mode, "resident");
    const [a, b] = await Promise.all([c.snapshot(dir, { message: "one" }), c.list(dir)]);
    assert.equal(c.mode, "process");
    assert.equal(a.created, true);
    assert.ok(Array.isArray(b));
    assert.equal((await c.list(dir))[0]!.reason, "one");
  } finally {
    await c.close();
  }
});
