// casckpt-pi: pi's checkpoint extension without git. A checkpoint when a
// turn starts, and one before its first write, edit or bash that starts
// the casckpt turn, ended at turn_end (so `casckpt undo` reverts one
// turn); every checkpoint's id kept in the session tree (pi.appendEntry);
// the restore choices on a fork or a tree jump; /checkpoints, /undo-turn.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as casckpt from "./casckpt.js";
import { readConfig } from "./config.js";
import { offerRestore, type RestoreHost } from "./restore.js";
import { checkpointAt, checkpointOf, ENTRY_TYPE, landingEntry, type CheckpointData, type EntryLike } from "./tree.js";
import { registerCommands } from "./commands.js";

/** The tools that change files: a checkpoint is taken before the first of a turn. */
export const MUTATING_TOOLS = new Set(["write", "edit", "bash"]);

/** N of a turn id SESSION-N, else 0. */
export function turnNumber(session: string, id: string | undefined): number {
	if (!id?.startsWith(`${session}-`)) return 0;
	const n = Number(id.slice(session.length + 1));
	return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/** Tells the person: a notification with a UI, a line on stderr without. */
function say(ctx: ExtensionContext, text: string, level: "info" | "warning" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, level);
	else process.stderr.write(`${text}\n`);
}

/** The extension: pi calls it once per session runtime. */
export default function casckptPi(pi: ExtensionAPI): void {
	const config = readConfig();
	const o = { store: config.store, keep: config.keep, exclude: config.exclude, maxDirFiles: config.maxDirFiles };
	let session = "";
	let count = 0;
	let turn: { id: string; mutated: boolean } | undefined;

	const append = (data: CheckpointData) => pi.appendEntry(ENTRY_TYPE, data);
	const host: RestoreHost = { config, session: () => session, appendEntry: append, say };
	const entries = (ctx: ExtensionContext) => ctx.sessionManager.getEntries() as unknown as EntryLike[];
	const warn = (ctx: ExtensionContext, e: unknown) => say(ctx, `casckpt: ${(e as Error).message}`, "warning");

	pi.on("session_start", async (_event, ctx) => {
		session = ctx.sessionManager.getSessionId();
		turn = undefined;
		// Resumed: go on numbering after every turn the session and the store
		// know of, so that a turn id is never given twice (a fork is a new
		// session, with ids of its own).
		const known = entries(ctx).map((e) => checkpointOf(e)?.turn);
		try {
			known.push(...(await casckpt.turns(ctx.cwd, { ...o, session })).map((t) => t.turn));
		} catch (e) {
			warn(ctx, e);
		}
		count = Math.max(0, ...known.map((t) => turnNumber(session, t)));
	});

	pi.on("turn_start", async (_event, ctx) => {
		const id = `${session}-${++count}`;
		turn = { id, mutated: false };
		try {
			// Not yet labelled with the turn: what a person does while the model
			// thinks is theirs; the turn starts before its first write, edit or bash.
			const s = await casckpt.snapshot(ctx.cwd, { ...o, session, message: `pi: turn ${id} start` });
			if (s.id) append({ snapshot: s.id, kind: "turn-start", turn: id, session });
		} catch (e) {
			warn(ctx, e);
		}
	});

	pi.on("tool_call", async (event, ctx) => {
		if (!turn || turn.mutated || !MUTATING_TOOLS.has(event.toolName)) return undefined;
		turn.mutated = true;
		try {
			await casckpt.snapshot(ctx.cwd, { ...o, session, turn: turn.id, message: `pi: before ${event.toolName}` });
		} catch (e) {
			warn(ctx, e);
		}
		return undefined;
	});

	pi.on("tool_result", async (event, ctx) => {
		const p = (event.input as { path?: unknown }).path;
		if ((event.toolName !== "write" && event.toolName !== "edit") || event.isError || typeof p !== "string") return undefined;
		await casckpt.recordWrite(ctx.cwd, [p], o).catch((e) => warn(ctx, e));
		return undefined;
	});

	// pi runs turn_end handlers from a queue that can lag behind the agent
	// (print mode may end first): the end snapshot is tracked, and
	// session_shutdown ends a turn still open and waits for it.
	const pending = new Set<Promise<void>>();
	const endTurn = (ctx: ExtensionContext): Promise<void> => {
		if (!turn) return Promise.resolve();
		const id = turn.id;
		turn = undefined;
		const p = casckpt
			.snapshot(ctx.cwd, { ...o, session, turn: id, endTurn: true, message: `pi: end of turn ${id}` })
			.then((s) => { if (s.id) append({ snapshot: s.id, kind: "turn-end", turn: id, session }); })
			.catch((e) => warn(ctx, e))
			.finally(() => pending.delete(p));
		pending.add(p);
		return p;
	};

	pi.on("turn_end", async (_event, ctx) => endTurn(ctx));

	pi.on("session_shutdown", async (_event, ctx) => {
		await endTurn(ctx);
		await Promise.allSettled([...pending]);
		await casckpt.closeAll();
	});

	pi.on("session_before_fork", async (event, ctx) => {
		const all = entries(ctx);
		const at = event.position === "at" ? event.entryId : landingEntry(all, event.entryId);
		return offerRestore(ctx, host, checkpointAt(all, at), `entry ${event.entryId}`);
	});

	pi.on("session_before_tree", async (event, ctx) => {
		const all = entries(ctx);
		const target = event.preparation.targetId;
		return offerRestore(ctx, host, checkpointAt(all, landingEntry(all, target)), `entry ${target}`);
	});

	registerCommands(pi, { say, store: config.store });
}
