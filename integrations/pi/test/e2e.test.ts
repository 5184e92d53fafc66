// The real pi (from npm, the committed lockfile) with this extension, a
// scripted model server on 127.0.0.1 and no git on PATH: three prompts that
// write, edit and delete files through pi's tools and bash; a fork to the
// second prompt with "files only"; a tree jump with "files and
// conversation" and safe restore.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { startScriptedServer } from "./scripted-server.js";
import { cas, files, makeWorld } from "./harness.js";
import { checkpoints, SCRIPT, sessionEntries, threePrompts } from "./scenario.js";

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
