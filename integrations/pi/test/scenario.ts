// The scenario the end-to-end tests share: a script of three prompts and
// readers of pi's session file.
import * as fs from "node:fs";
import * as path from "node:path";
import type { ScriptTurn } from "./scripted-server.js";
import { PiRpc, PKG, type World } from "./harness.js";
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
