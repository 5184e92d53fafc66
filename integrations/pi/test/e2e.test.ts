// The real pi (from npm, the committed lockfile) with this extension, a
// scripted model server on 127.0.0.1 and no git on PATH: three prompts that
// write, edit and delete files through pi's tools and bash; a fork to the
// second prompt with "files only"; a tree jump with "files and
// conversation" and safe restore.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { startScriptedServer, type ScriptTurn } from "./scripted-server.js";
import { cas, files, makeWorld, PiRpc, PKG, type World } from "./harness.js";
import { ENTRY_TYPE, type CheckpointData } from "../src/tree.js";

/** The script: three prompts, each two tool turns and a closing text. */
export const SCRIPT: ScriptTurn[] = [
	{ tools: [{ tool: "write", input: { path: "a.txt", content: "alpha\n" } }] },
	{ tools: [{ tool: "write", input: { path: "b.txt", content: "beta\n" } }] },
	{ text: "prompt 1 done" },
	{ tools: [{ tool: "edit", input: { path: "a.txt", edits: [{ oldText: "alpha", newText: "ALPHA" }] } }] },
	{ tools: [{ tool: "bash", input: { command: "rm b.txt && echo gamma > c.txt" } }] },
	{ text: "prompt 2 done" },
	{ tools: [{ tool: "write", input: { path: "d.txt", content: "delta\n" } }] },
	{ tools: [{ tool: "bash", input: { command: "rm c.txt" } }] },
	{ text: "prompt 3 done" },
];

/** The session file's entries. */
export function sessionEntries(file: string): any[] {
	return fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type !== "session");
}

/** The checkpoint entries of a session file. */
export function checkpoints(file: string): CheckpointData[] {
	return sessionEntries(file).filter((e) => e.type === "custom" && e.customType === ENTRY_TYPE).map((e) => e.data);
}

/** Starts pi with the extension and the navigation fixture in W, runs the three prompts. */
export async function threePrompts(w: World, between?: () => void): Promise<PiRpc> {
	fs.writeFileSync(path.join(w.proj, "README.md"), "a project\n");
	const pi = new PiRpc(w, ["-e", path.join(PKG, "dist", "test", "fixtures", "navigate.js")]);
	await pi.prompt("first: make a.txt and b.txt");
	await pi.prompt("second: edit a.txt, replace b.txt by c.txt");
	between?.();
	await pi.prompt("third: make d.txt, remove c.txt");
	return pi;
}

test("real pi: three prompts, fork with files only, tree jump with files and conversation (safe)", async (t) => {
	const server = await startScriptedServer(SCRIPT);
	t.after(() => server.close());
	const w = makeWorld(server.url);
	assert.ok(!fs.readdirSync(w.env.PATH!).some((n) => n.startsWith("git")), "git must not be on PATH");
	const pi = await threePrompts(w, () => fs.writeFileSync(path.join(w.proj, "person.txt"), "mine\n"));
	t.after(() => pi.close());
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "ALPHA\n", "d.txt": "delta\n", "person.txt": "mine\n" });

	// Each pi turn is a casckpt turn with a start and an end.
	const state = await pi.call({ type: "get_state" });
	const cps = checkpoints(state.sessionFile);
	const turns = cas(w, "turns", w.proj);
	assert.equal(turns.length, 9);
	assert.equal(cps.filter((c) => c.kind === "turn-start").length, 9);
	assert.equal(cps.filter((c) => c.kind === "turn-end").length, 9);
	assert.ok(turns.every((x: any) => x.end !== null && x.session === cps[0].session));

	// Fork to the second prompt, files only, exact: the files of that point.
	const forks = (await pi.call({ type: "get_fork_messages" })).messages;
	const second = forks.find((m: any) => m.text.startsWith("second"));
	pi.answers = ["Files only", "Restore exactly"];
	const fork = await pi.call({ type: "fork", entryId: second.entryId });
	assert.equal(fork.cancelled, true, "files only keeps the conversation where it is");
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "alpha\n", "b.txt": "beta\n" });
	assert.equal((await pi.call({ type: "get_state" })).sessionFile, state.sessionFile);
	assert.match(pi.dialogs[1].title, /delete person\.txt/, "the preview names what will change");

	// The before-restore checkpoint holds what was there before.
	const pre = checkpoints(state.sessionFile).filter((c) => c.kind === "before-restore");
	assert.equal(pre.length, 1);
	assert.equal(cas(w, "cat", w.proj, pre[0].snapshot, "person.txt").content, "mine\n");
	assert.equal(cas(w, "cat", w.proj, pre[0].snapshot, "a.txt").content, "ALPHA\n");
	assert.equal(cas(w, "cat", w.proj, pre[0].snapshot, "d.txt").content, "delta\n");

	// A person edits b.txt; jump to the third prompt (the files as they were
	// when it was sent, person.txt included), files and conversation, safe:
	// the person's b.txt is kept.
	fs.writeFileSync(path.join(w.proj, "b.txt"), "beta by person\n");
	const third = sessionEntries(state.sessionFile).find((e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes("third"));
	pi.answers = ["Restore files and conversation", "Restore, keeping"];
	await pi.prompt(`/navtree ${third.id}`);
	await pi.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && /restored/.test(r.message));
	assert.deepEqual(files(w.proj), { "README.md": "a project\n", "a.txt": "ALPHA\n", "b.txt": "beta by person\n", "c.txt": "gamma\n", "person.txt": "mine\n" });
	const msgs = (await pi.call({ type: "get_messages" })).messages;
	const users = msgs.filter((m: any) => m.role === "user").map((m: any) => JSON.stringify(m.content));
	assert.equal(users.length, 2, "the conversation is back before the third prompt");
	assert.ok(users[1].includes("second"));
});
