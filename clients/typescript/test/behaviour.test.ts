// What the client does besides giving documents: bytes on disk, typed
// errors, the plain functions, where it finds the binary, and its
// fallback from a resident server to a process per call.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import * as casckpt from "../src/index.js";
import { Casckpt, CasckptError, findBinary, platformPackage, type Restore, type Snapshot, type Verify } from "../src/index.js";
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

test("exclude and maxDirFiles leave paths out of the snapshot and its restore alone", async () => {
  const { dir, store } = project();
  const big: Record<string, string> = {};
  for (let i = 0; i < 5; i++) big[`gen/f${i}`] = `${i}\n`;
  writeFiles(dir, { ".tox/py/x": "tox\n", ...big });
  const c = new Casckpt({ binary: casckptBin(), store });
  try {
    const s = await c.snapshot(dir, { exclude: [".tox/"], maxDirFiles: 5 });
    assert.deepEqual((await c.ls(dir, "@1")).map((e) => e.path), ["a.txt"]);
    writeFiles(dir, { "a.txt": "changed\n", ".tox/py/x": "changed since\n" });
    await c.restore(dir, s.id!);
    assert.equal(readFileSync(join(dir, "a.txt"), "utf8"), "one\n");
    assert.equal(readFileSync(join(dir, ".tox/py/x"), "utf8"), "changed since\n");
    assert.equal(readFileSync(join(dir, "gen/f4"), "utf8"), "4\n");
  } finally {
    await c.close();
  }
});

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
  await assert.rejects(
    c.status(),
    (e: unknown) =>
      e instanceof CasckptError && e.exit === 127 && e.message.includes("CASCKPT_BIN") && e.message.includes(`npm install casckpt`) && e.message.includes(platformPackage()),
  );
});

test("the casckpt command (the package's bin) without the platform package: exit 1, one line saying what to do", () => {
  const cli = fileURLToPath(new URL("../src/cli.js", import.meta.url));
  const r = spawnSync(process.execPath, [cli, "version"], { cwd: scratch(), encoding: "utf8", env: { PATH: "" } });
  assert.equal(r.status, 1, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, new RegExp(`^casckpt: the package ${platformPackage()} is not installed, .*--omit=optional.*CASCKPT_BIN.*\n$`));
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

/** A casckpt whose serve reads one request and dies without answering it; every other command is the real binary's. */
function dyingServer(): string {
  const path = join(scratch(), "dying-casckpt");
  writeFileSync(
    path,
    `#!/bin/sh\nfor a in "$@"; do if [ "$a" = serve ]; then read -r line; kill -9 $$; fi; done\nexec '${casckptBin()}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

test("a server that dies: the request in flight fails (it may have run), later calls run a process each", async () => {
  const { dir, store } = project();
  const c = new Casckpt({ binary: dyingServer(), store });
  try {
    await assert.rejects(c.snapshot(dir), (e: unknown) => {
      assert.ok(e instanceof CasckptError);
      assert.match(e.message, /casckpt serve ended \(SIGKILL\) before answering; the command may or may not have run/);
      return true;
    });
    assert.equal(c.mode, "process");
    assert.equal((await c.snapshot(dir, { message: "after" })).created, true);
    assert.deepEqual((await c.list(dir)).map((x) => x.reason), ["after"]);
  } finally {
    await c.close();
  }
});

test("resident: one server answers pipelined requests, each with its own document", async () => {
  const { dir, store } = project();
  writeFiles(dir, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}.txt`, `file ${i}\n`])));
  const c = new Casckpt({ binary: casckptBin(), store });
  try {
    await c.snapshot(dir);
    const cats = await Promise.all(Array.from({ length: 20 }, (_, i) => c.cat(dir, "@1", `f${i}.txt`)));
    assert.deepEqual(
      cats.map((x) => x.content),
      Array.from({ length: 20 }, (_, i) => `file ${i}\n`),
    );
    assert.equal(c.mode, "resident");
  } finally {
    await c.close();
  }
});

test("a host that never closes its client still exits", () => {
  const { dir, store } = project();
  const script = `import { Casckpt } from ${JSON.stringify(new URL("../src/index.js", import.meta.url).href)};
const c = new Casckpt({ binary: ${JSON.stringify(casckptBin())}, store: ${JSON.stringify(store)} });
const s = await c.snapshot(${JSON.stringify(dir)});
console.log(c.mode, s.created);`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "resident true\n");
});

test("the binary: the platform package's, when installed beside the client, before PATH", () => {
  // A host's node_modules: this client as casckpt, and the platform package @casckpt/<platform>-<arch>.
  const nm = join(scratch(), "node_modules");
  cpSync(fileURLToPath(new URL("../src", import.meta.url)), join(nm, "casckpt", "dist"), { recursive: true });
  writeFileSync(join(nm, "casckpt", "package.json"), JSON.stringify({ name: "casckpt", type: "module", main: "dist/index.js" }));
  const pkg = join(nm, ...platformPackage().split("/"));
  mkdirSync(join(pkg, "bin"), { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: platformPackage(), version: "0.0.0" }));
  cpSync(casckptBin(), join(pkg, "bin", "casckpt")); // a copy: require.resolve gives a link's target
  const script = `import { binaryPath, findBinary, version } from "casckpt";
console.log(binaryPath() === findBinary(undefined, { PATH: "" }), findBinary(undefined, { PATH: "" }));
console.log((await version({ env: { PATH: "" } })).go.startsWith("go"));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dirname(nm), encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `true ${join(pkg, "bin", "casckpt")}\ntrue\n`);
});

/** A casckpt whose snapshot never ends, and whose serve reads requests and never answers; all else is the real binary. */
function hangingBinary(): string {
  const path = join(scratch(), "hanging-casckpt");
  writeFileSync(
    path,
    `#!/bin/sh\nfor a in "$@"; do case "$a" in serve) exec cat >/dev/null;; snapshot) exec tail -f /dev/null;; esac; done\nexec '${casckptBin()}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

for (const resident of [false, true]) {
  test(`a command past its timeout fails with exit 124; the client goes on (resident: ${resident})`, async () => {
    const { dir, store } = project();
    const c = new Casckpt({ binary: hangingBinary(), store, resident, timeoutMs: 300 });
    try {
      await assert.rejects(c.snapshot(dir), (e: unknown) => {
        assert.ok(e instanceof CasckptError);
        assert.equal(e.exit, 124);
        assert.match(e.message, /^timed out after 300 ms/);
        return true;
      });
      assert.deepEqual(await c.list(dir, { timeoutMs: 120_000 }), []); // a call sets its own
      assert.equal(c.mode, "process");
    } finally {
      await c.close();
    }
  });
}

for (const resident of [false, true]) {
  test(`verify of a damaged store: CasckptError exit 1 with the Verify document (resident: ${resident})`, async () => {
    const { dir, store } = project();
    // The snapshot's data in a pack file, to damage (a small one is otherwise inline in the database).
    const c = new Casckpt({ binary: casckptBin(), store, resident, env: { ...process.env, CASCKPT_FILE_PACKS: "1" } });
    try {
      const s = await c.snapshot(dir);
      for (const pack of readdirSync(join(store, "packs"))) {
        const b = readFileSync(join(store, "packs", pack));
        for (let i = 40; i < Math.min(64, b.length); i++) {
          b[i]! ^= 0xff; // damage the first object's bytes
        }
        writeFileSync(join(store, "packs", pack), b);
      }
      await assert.rejects(c.verify(), (e: unknown) => {
        assert.ok(e instanceof CasckptError);
        assert.equal(e.exit, 1);
        assert.match(e.message, /^1 damaged snapshot/);
        const v = e.document as Verify;
        assert.deepEqual(v.damaged.map((d) => d.id), [s.id]);
        return true;
      });
    } finally {
      await c.close();
    }
  });
}
