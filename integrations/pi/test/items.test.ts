// A test per item of pi's checkpoint extension's README, against the real
// pi with no git on PATH: turn checkpoints (and undo of one turn, and
// resume), the before-restore checkpoint, the restore choices on fork and
// on tree navigation, and the exclusions.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { startScriptedServer, type ScriptTurn } from "./scripted-server.js";
import { cas, EXTENSION, files, makeWorld, PI_BIN, PiRpc, PKG, type World } from "./harness.js";
import { checkpoints, SCRIPT, sessionEntries, threePrompts } from "./scenario.js";

const NAV = ["-e", path.join(PKG, "dist", "test", "fixtures", "navigate.js")];
const F1 = { "README.md": "a project\n", "a.txt": "alpha\n", "b.txt": "beta\n" };
const F3 = { "README.md": "a project\n", "a.txt": "ALPHA\n", "d.txt": "delta\n" };

async function world(t: { after: (fn: () => unknown) => void }, script: ScriptTurn[] = SCRIPT, before?: (turn: number) => void): Promise<World> {
	const server = await startScriptedServer(script, before);
	t.after(() => server.close());
	const w = makeWorld(server.url);
	fs.writeFileSync(path.join(w.proj, "README.md"), "a project\n");
	return w;
}

async function users(pi: PiRpc): Promise<number> {
	return (await pi.call({ type: "get_messages" })).messages.filter((m: any) => m.role === "user").length;
}

function userEntry(file: string, word: string): any {
	return sessionEntries(file).find((e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes(word));
}

async function notified(pi: PiRpc, re: RegExp, from: number): Promise<string> {
	return (await pi.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && re.test(r.message), from)).message;
}

test("turn checkpoints: each turn starts and ends in the store, its ids in the session tree; /undo-turn; resume", async (t) => {
	// A person writes notes.md while the model thinks about its first turn.
	let proj = "";
	const w = await world(t, SCRIPT, (i) => i === 0 && fs.writeFileSync(path.join(proj, "notes.md"), "person\n"));
	proj = w.proj;
	let pi = new PiRpc(w, NAV);
	t.after(() => pi.close());
	await pi.prompt("first: make a.txt and b.txt");
	const { sessionFile, sessionId } = await pi.call({ type: "get_state" });
	const cps = checkpoints(sessionFile);
	const turns = cas(w, "turns", w.proj);
	assert.equal(turns.length, 3);
	assert.equal(cps.filter((c) => c.kind === "turn-start").length, 3);
	for (const tr of turns) {
		assert.equal(tr.session, sessionId);
		assert.ok(cps.some((c) => c.kind === "turn-end" && c.turn === tr.turn && c.snapshot === tr.end));
	}
	// The first turn starts at the checkpoint before its write: the person's
	// file is there, so it is not the agent's.
	const first = turns[2];
	assert.deepEqual(cas(w, "ls", w.proj, first.start).map((e: any) => e.path).sort(), ["README.md", "notes.md"]);

	let from = pi.records.length;
	await pi.prompt("/checkpoints");
	const listing = await notified(pi, /a\.txt \(added\)/, from);
	assert.match(listing, /b\.txt \(added\)/);

	from = pi.records.length;
	await pi.prompt("/undo-turn");
	await notified(pi, /undid turn/, from);
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "alpha\n", "notes.md": "person\n" }, "only the newest turn's write is undone");
	from = pi.records.length;
	await pi.prompt(`/undo-turn ${first.turn}`);
	await notified(pi, /undid turn/, from);
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "notes.md": "person\n" }, "the person's file is kept");

	// Resume: the checkpoints are read back from the session; turns go on numbering.
	await pi.close();
	pi = new PiRpc(w, [...NAV, "--continue"]);
	from = pi.records.length;
	await pi.prompt("/checkpoints");
	assert.match(await notified(pi, /undone/, from), /a\.txt \(added\)/);
	await pi.prompt("again");
	const after = cas(w, "turns", w.proj);
	assert.equal(after.length, 6, "the resumed session's prompt ran three more turns");
	assert.deepEqual(after.slice(0, 3).map((x: any) => x.turn).sort(), [4, 5, 6].map((n) => `${sessionId}-${n}`));
	assert.equal((await pi.call({ type: "get_state" })).sessionFile, sessionFile);
});

test("before-restore checkpoint: taken before any file changes, in the session tree, holding what was there", async (t) => {
	const w = await world(t);
	const pi = await threePrompts(w);
	t.after(() => pi.close());
	const { sessionFile } = await pi.call({ type: "get_state" });
	const second = userEntry(sessionFile, "second");
	pi.answers = ["Files only", "Restore exactly"];
	await pi.prompt(`/navtree ${second.id}`);
	assert.deepEqual(files(w.proj), F1);
	const pre = checkpoints(sessionFile).filter((c) => c.kind === "before-restore");
	assert.equal(pre.length, 1);
	assert.deepEqual(cas(w, "ls", w.proj, pre[0].snapshot).map((e: any) => e.path).sort(), Object.keys(F3).sort());
	assert.equal(cas(w, "cat", w.proj, pre[0].snapshot, "a.txt").content, "ALPHA\n");
	// Going back: restore the before-restore checkpoint.
	cas(w, "restore", w.proj, pre[0].snapshot);
	assert.deepEqual(files(w.proj), F3);
});

test("restore choices on tree navigation: cancel, files only, conversation only, files and conversation", async (t) => {
	const w = await world(t);
	const pi = await threePrompts(w);
	t.after(() => pi.close());
	const { sessionFile } = await pi.call({ type: "get_state" });
	const second = userEntry(sessionFile, "second").id;
	const third = userEntry(sessionFile, "third").id;
	const last = sessionEntries(sessionFile).filter((e) => e.type === "message" && e.message.role === "assistant").pop().id;

	pi.answers = ["Cancel"];
	await pi.prompt(`/navtree ${second}`);
	assert.deepEqual(files(w.proj), F3);
	assert.equal(await users(pi), 3);

	pi.answers = ["Files only", "Restore exactly"];
	await pi.prompt(`/navtree ${second}`);
	assert.deepEqual(files(w.proj), F1);
	assert.equal(await users(pi), 3);

	pi.answers = ["Conversation only"];
	await pi.prompt(`/navtree ${third}`);
	assert.deepEqual(files(w.proj), F1);
	assert.equal(await users(pi), 2);

	pi.answers = ["Restore files and conversation", "Restore exactly"];
	await pi.prompt(`/navtree ${last}`);
	assert.deepEqual(files(w.proj), F3);
	assert.equal(await users(pi), 3);
});

test("restore choices on fork: cancel, conversation only, files and conversation", async (t) => {
	const w = await world(t);
	const pi = await threePrompts(w);
	t.after(() => pi.close());
	const first = (await pi.call({ type: "get_state" })).sessionFile;
	const forks = async () => (await pi.call({ type: "get_fork_messages" })).messages;
	const second = (await forks()).find((m: any) => m.text.startsWith("second")).entryId;

	pi.answers = ["Cancel"];
	assert.equal((await pi.call({ type: "fork", entryId: second })).cancelled, true);
	assert.equal((await pi.call({ type: "get_state" })).sessionFile, first);

	pi.answers = ["Conversation only"];
	assert.equal((await pi.call({ type: "fork", entryId: second })).cancelled, false);
	assert.notEqual((await pi.call({ type: "get_state" })).sessionFile, first);
	assert.deepEqual(files(w.proj), F3);
	assert.equal(await users(pi), 1);

	// In the forked session the checkpoints came along: fork again, before the first prompt.
	const one = (await forks()).find((m: any) => m.text.startsWith("first")).entryId;
	pi.answers = ["Restore files and conversation", "Restore exactly"];
	assert.equal((await pi.call({ type: "fork", entryId: one })).cancelled, false);
	assert.deepEqual(files(w.proj), { "README.md": "a project\n" });
	assert.equal(await users(pi), 0);
});

test("exclusions: node_modules, .venv and files over 10 MiB are never captured, and never deleted by a restore", async (t) => {
	const w = await world(t, [
		{ tools: [{ tool: "bash", input: { command: "mkdir -p node_modules/x .venv/bin && echo m > node_modules/x/i.js && echo p > .venv/bin/python && head -c 11534336 /dev/zero > big.bin" } }] },
		{ tools: [{ tool: "write", input: { path: "src.txt", content: "source\n" } }] },
		{ text: "done" },
	]);
	const pi = new PiRpc(w, NAV);
	t.after(() => pi.close());
	await pi.prompt("make things");
	const { sessionFile } = await pi.call({ type: "get_state" });
	const end = checkpoints(sessionFile).filter((c) => c.kind === "turn-end").pop()!;
	assert.deepEqual(cas(w, "ls", w.proj, end.snapshot).map((e: any) => e.path).sort(), ["README.md", "src.txt"]);

	pi.answers = ["Files only", "Restore exactly"];
	await pi.prompt(`/navtree ${userEntry(sessionFile, "make things").id}`);
	const left = files(w.proj);
	assert.equal(left["src.txt"], undefined);
	assert.equal(left["node_modules/x/i.js"], "m\n");
	assert.equal(left[".venv/bin/python"], "p\n");
	assert.equal(fs.statSync(path.join(w.proj, "big.bin")).size, 11534336);
});

/**
 * Runs a turn whose bash makes what MADE runs and whose write adds src.txt,
 * then a files-only, exact jump back before it: the turn's end checkpoint
 * holds no file but README.md and src.txt, and what the bash made
 * survives the restore byte for byte.
 */
async function excludedAndKept(t: { after: (fn: () => unknown) => void }, made: string, expect: Record<string, string>): Promise<World> {
	const w = await world(t, [
		{ tools: [{ tool: "bash", input: { command: made } }] },
		{ tools: [{ tool: "write", input: { path: "src.txt", content: "source\n" } }] },
		{ text: "done" },
	]);
	const pi = new PiRpc(w, NAV);
	t.after(() => pi.close());
	await pi.prompt("make things");
	const { sessionFile } = await pi.call({ type: "get_state" });
	const end = checkpoints(sessionFile).filter((c) => c.kind === "turn-end").pop()!;
	assert.deepEqual(cas(w, "ls", w.proj, end.snapshot).filter((e: any) => e.type !== "dir").map((e: any) => e.path).sort(), ["README.md", "src.txt"]);
	for (const p of Object.keys(expect)) {
		assert.throws(() => cas(w, "cat", w.proj, end.snapshot, p), `the checkpoint holds ${p}`);
	}

	pi.answers = ["Files only", "Restore exactly"];
	await pi.prompt(`/navtree ${userEntry(sessionFile, "make things").id}`);
	const left = files(w.proj);
	assert.equal(left["src.txt"], undefined, "the restore ran");
	for (const [p, data] of Object.entries(expect)) assert.equal(left[p], data, `${p} after the restore`);
	return w;
}

test("exclusions: .tox, at any depth, is never captured, and never deleted by a restore", async (t) => {
	await excludedAndKept(t, "mkdir -p .tox/py lib/.tox && echo t > .tox/py/x && echo u > lib/.tox/y", { ".tox/py/x": "t\n", "lib/.tox/y": "u\n" });
});

test("exclusions: an untracked directory of 250 files is never captured, and never deleted by a restore", async (t) => {
	const gen: Record<string, string> = {};
	for (let i = 0; i < 250; i++) gen[`gen/f${i}`] = `${i}\n`;
	await excludedAndKept(t, "mkdir gen && for i in $(seq 0 249); do echo $i > gen/f$i; done", gen);
});

/** Runs pi in print mode (asynchronously: the scripted server runs in this process). */
function printMode(w: World, env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ stderr: string; status: number | null }> {
	const a = [PI_BIN, "-p", "--model", "scripted/scripted-model", "--session-dir", path.join(w.root, "sessions"), "-e", EXTENSION, ...NAV, ...args];
	const p = spawn(process.execPath, a, { cwd: w.proj, env: { ...w.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
	let stderr = "";
	p.stderr.on("data", (d) => (stderr += d));
	p.stdout.resume();
	const t = setTimeout(() => p.kill("SIGTERM"), 120000);
	return new Promise((resolve) => p.on("close", (status) => { clearTimeout(t); resolve({ stderr, status }); }));
}

test("no UI (print mode): turn checkpoints; a tree jump takes CASCKPT_PI_NO_UI's choice, safe unless CASCKPT_PI_SAFE=0", async (t) => {
	const w = await world(t);
	assert.equal((await printMode(w, {}, "first: make a.txt and b.txt")).status, 0);
	// Print mode may exit before pi runs the last, text-only turn's events;
	// every turn that changed files is ended (at session_shutdown at the latest).
	const changed = cas(w, "turns", w.proj).filter((x: any) => x.files_changed > 0);
	assert.equal(changed.length, 2);
	assert.ok(changed.every((x: any) => x.end !== null));
	const dir = path.join(w.root, "sessions");
	const sessionFile = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
	const first = userEntry(sessionFile, "first").id;

	// The default without a UI: conversation only, files untouched.
	let r = await printMode(w, {}, "-c", `/navtree ${first}`);
	assert.equal(r.status, 0, r.stderr);
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "alpha\n", "b.txt": "beta\n" });

	// Files only, safe: a person's edit is kept, the agent's files go.
	fs.writeFileSync(path.join(w.proj, "a.txt"), "alpha by person\n");
	r = await printMode(w, { CASCKPT_PI_NO_UI: "files" }, "-c", `/navtree ${first}`);
	assert.equal(r.status, 0, r.stderr);
	assert.match(r.stderr, /delete b\.txt/, "the preview is printed on stderr");
	assert.match(r.stderr, /casckpt: restored/);
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "alpha by person\n" });
});
