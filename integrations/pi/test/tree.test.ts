// Where checkpoints sit in the session tree: the nearest checkpoint entry
// on the path to the root, never a sibling branch's, never by time.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkpointAt, ENTRY_TYPE, landingEntry, turnsOnBranch, type EntryLike } from "../src/tree.js";

const cp = (id: string, parentId: string | null, snapshot: string, turn?: string): EntryLike => ({
	type: "custom", id, parentId, customType: ENTRY_TYPE, data: { snapshot, kind: "turn-start", session: "s", turn },
});
const msg = (id: string, parentId: string | null, role: string): EntryLike => ({ type: "message", id, parentId, message: { role } });

// u1 -> c1 -> a1 -> c2 -> u2 -> a2 ; and a sibling branch c2 -> c3 -> u3
const entries: EntryLike[] = [
	msg("u1", null, "user"), cp("c1", "u1", "S1", "t1"), msg("a1", "c1", "assistant"), cp("c2", "a1", "S2", "t1"),
	msg("u2", "c2", "user"), msg("a2", "u2", "assistant"), cp("c3", "c2", "S3", "t2"), msg("u3", "c3", "user"),
	{ type: "custom", id: "x", parentId: "a2", customType: "other", data: { snapshot: "NO" } },
];

test("the nearest checkpoint on the path to the root", () => {
	assert.equal(checkpointAt(entries, "a2")?.snapshot, "S2");
	assert.equal(checkpointAt(entries, "x")?.snapshot, "S2", "other extensions' entries are not checkpoints");
	assert.equal(checkpointAt(entries, "c3")?.snapshot, "S3");
	assert.equal(checkpointAt(entries, "u3")?.snapshot, "S3");
	assert.equal(checkpointAt(entries, "a1")?.snapshot, "S1");
	assert.equal(checkpointAt(entries, "u1"), undefined);
	assert.equal(checkpointAt(entries, null), undefined);
});

test("a user message lands on its parent; anything else on itself", () => {
	assert.equal(landingEntry(entries, "u2"), "c2");
	assert.equal(landingEntry(entries, "a2"), "a2");
	assert.equal(landingEntry(entries, "u1"), null);
});

test("the turns of a branch, each once, oldest first", () => {
	assert.deepEqual(turnsOnBranch(entries.slice(0, 6)), ["t1"]);
	assert.deepEqual(turnsOnBranch([...entries.slice(0, 4), entries[6]]), ["t1", "t2"]);
});

test("turn numbers: only this session's ids count", async () => {
	const { turnNumber } = await import("../src/index.js");
	assert.equal(turnNumber("s-1", "s-1-12"), 12);
	assert.equal(turnNumber("s-1", "s-2-12"), 0);
	assert.equal(turnNumber("s-1", "s-1-x"), 0);
	assert.equal(turnNumber("s-1", undefined), 0);
});

test("settings from the environment, defaults for anything else", async () => {
	const { readConfig } = await import("../src/config.js");
	assert.deepEqual(readConfig({}), { noUiChoice: "conversation", noUiSafe: true, store: undefined, keep: 200, exclude: [".tox/"], maxDirFiles: 200 });
	assert.deepEqual(readConfig({ CASCKPT_PI_NO_UI: "files", CASCKPT_PI_SAFE: "0", CASCKPT_PI_STORE: "/s", CASCKPT_PI_KEEP: "50", CASCKPT_PI_EXCLUDE: ".tox/, gen/,!x,", CASCKPT_PI_MAX_DIR_FILES: "0" }),
		{ noUiChoice: "files", noUiSafe: false, store: "/s", keep: 50, exclude: [".tox/", "gen/"], maxDirFiles: 0 });
	assert.deepEqual(readConfig({ CASCKPT_PI_EXCLUDE: "", CASCKPT_PI_MAX_DIR_FILES: "-5" }).exclude, []);
	assert.equal(readConfig({ CASCKPT_PI_MAX_DIR_FILES: "-5" }).maxDirFiles, 200);
	assert.equal(readConfig({ CASCKPT_PI_NO_UI: "everything", CASCKPT_PI_KEEP: "-1" }).noUiChoice, "conversation");
	assert.equal(readConfig({ CASCKPT_PI_KEEP: "0" }).keep, 200);
});
