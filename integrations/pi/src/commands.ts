// /checkpoints and /undo-turn.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as casckpt from "./casckpt.js";
import { turnsOnBranch, type EntryLike } from "./tree.js";

/** What the commands need from the extension. */
export interface CommandHost {
	say: (ctx: ExtensionContext, text: string, level?: "info" | "warning" | "error") => void;
	store?: string;
}

/** The casckpt turns of the current branch, newest first. */
export async function branchTurns(ctx: ExtensionContext, store?: string): Promise<casckpt.Turn[]> {
	const mine = new Set(turnsOnBranch(ctx.sessionManager.getBranch() as unknown as EntryLike[]));
	return (await casckpt.turns(ctx.cwd, { store })).filter((t) => mine.has(t.turn));
}

/** One line per turn: its id, when, and what it changed (file by file). */
export async function describeTurns(ctx: ExtensionContext, store?: string): Promise<string> {
	const ts = await branchTurns(ctx, store);
	if (!ts.length) return "casckpt: no checkpoints in this branch yet";
	const lines: string[] = [];
	for (const t of ts) {
		const state = !t.end ? "open" : t.undone_by ? "undone" : t.dropped.length ? `dropped ${t.dropped.join(",")}` : "";
		let files = "";
		if (t.end && !t.dropped.length && t.files_changed > 0) {
			const d = await casckpt.diff(ctx.cwd, t.start, t.end, { store });
			files = d.files.map((f) => `${f.path} (${f.status})`).join(", ");
		}
		lines.push(`${t.turn}  ${t.started}  ${state ? `[${state}] ` : ""}${files || "no file changes"}`);
	}
	return lines.join("\n");
}

/** Registers /checkpoints and /undo-turn. */
export function registerCommands(pi: ExtensionAPI, host: CommandHost): void {
	pi.registerCommand("checkpoints", {
		description: "List this branch's turns and the files each changed (casckpt)",
		handler: async (_args, ctx) => {
			try {
				host.say(ctx, await describeTurns(ctx, host.store));
			} catch (e) {
				host.say(ctx, `casckpt: ${(e as Error).message}`, "error");
			}
		},
	});
	pi.registerCommand("undo-turn", {
		description: "Revert the files of one turn (default: the newest not undone), keeping later changes",
		handler: async (args, ctx) => {
			try {
				await ctx.waitForIdle();
				let id = args.trim();
				if (!id) {
					const t = (await branchTurns(ctx, host.store)).find((x) => x.end && !x.undone_by && x.files_changed > 0);
					if (!t) return host.say(ctx, "casckpt: no turn of this branch left to undo", "warning");
					id = t.turn;
				}
				const r = await casckpt.undo(ctx.cwd, { turn: id, store: host.store });
				const c = r.conflicts.map((x) => `\n  conflict ${x.path}: ${x.reason}`).join("");
				host.say(ctx, `casckpt: undid turn ${r.turn}: ${r.reverted.length} reverted, ${r.merged.length} merged${c}`);
			} catch (e) {
				host.say(ctx, `casckpt: ${(e as Error).message}`, "error");
			}
		},
	});
}
