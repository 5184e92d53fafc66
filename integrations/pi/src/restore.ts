// The restore choices on a fork or a jump in the session tree: files and
// conversation, conversation only, files only, or cancel; a dry-run
// preview; safe or exact; a before-restore checkpoint first.
import * as path from "node:path";
import { withFileMutationQueue } from "@earendil-works/pi-coding-agent";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import * as casckpt from "./casckpt.js";
import type { Choice, Config } from "./config.js";
import type { CheckpointData } from "./tree.js";

/** The labels of the four choices, in the order pi's checkpoint extension shows them. */
export const CHOICE_LABELS: Record<Choice, string> = {
	all: "Restore files and conversation",
	conversation: "Conversation only (keep current files)",
	files: "Files only (restore files, keep conversation)",
	cancel: "Cancel",
};

/** The labels of the second question: keep a person's edits or not. */
export const MODE_LABELS = {
	safe: "Restore, keeping files edited by hand (safe)",
	exact: "Restore exactly (overwrite every change)",
	cancel: "Cancel",
} as const;

/** What the extension needs from its host for a restore. */
export interface RestoreHost {
	config: Config;
	session: () => string;
	appendEntry: (data: CheckpointData) => void;
	say: (ctx: ExtensionContext, text: string, level?: "info" | "warning" | "error") => void;
}

/** The navigation result pi takes from a session_before_* handler. */
export type Outcome = { cancel: true } | undefined;

/**
 * Names the changes of the exact restore plan EXACT, at most 20, each
 * marked when the safe plan SAFE keeps the path as it is.
 */
export function describePlan(exact: casckpt.RestoreResult, safe: casckpt.RestoreResult): string {
	const kept = new Map((safe.kept ?? []).map((k) => [k.path, k.reason]));
	const lines = exact.changes.slice(0, 20).map((c) => {
		const k = kept.get(c.path);
		return `  ${c.action === "delete" ? "delete" : "write "} ${c.path}${k ? `  (safe keeps it: ${k})` : ""}`;
	});
	if (exact.changes.length > 20) lines.push(`  ... and ${exact.changes.length - 20} more`);
	return lines.length ? lines.join("\n") : "  (no file changes)";
}

/** Runs FN holding pi's file mutation queue for every path, in a fixed order. */
async function withQueues<T>(cwd: string, paths: string[], fn: () => Promise<T>): Promise<T> {
	const abs = [...new Set(paths.map((p) => path.resolve(cwd, p)))].sort();
	const step = (i: number): Promise<T> => (i === abs.length ? fn() : withFileMutationQueue(abs[i], () => step(i + 1)));
	return step(0);
}

/** Asks which of the four choices to take (the configured one without a UI). */
async function askChoice(ctx: ExtensionContext, host: RestoreHost, where: string): Promise<Choice> {
	if (!ctx.hasUI) return host.config.noUiChoice;
	const order: Choice[] = ["all", "conversation", "files", "cancel"];
	const label = await ctx.ui.select(`Restore files to the checkpoint of ${where}?`, order.map((c) => CHOICE_LABELS[c]));
	return order.find((c) => CHOICE_LABELS[c] === label) ?? "cancel";
}

/** Shows the dry-run preview and asks safe, exact or cancel. */
async function askMode(ctx: ExtensionContext, host: RestoreHost, cp: CheckpointData): Promise<"safe" | "exact" | "cancel"> {
	const cwd = ctx.cwd;
	const safe = await casckpt.restore(cwd, cp.snapshot, { dryRun: true, safe: true, store: host.config.store });
	const exact = await casckpt.restore(cwd, cp.snapshot, { dryRun: true, store: host.config.store });
	const text = `Restore to ${cp.snapshot.slice(0, 12)}: ${exact.changes.length} change(s)\n${describePlan(exact, safe)}`;
	if (!ctx.hasUI) {
		host.say(ctx, text);
		return host.config.noUiSafe ? "safe" : "exact";
	}
	const label = await ctx.ui.select(text, [MODE_LABELS.safe, MODE_LABELS.exact, MODE_LABELS.cancel]);
	return label === MODE_LABELS.safe ? "safe" : label === MODE_LABELS.exact ? "exact" : "cancel";
}

/**
 * Restores the files to CP after a before-restore checkpoint, inside pi's
 * file mutation queue. Returns the restore's document.
 */
export async function restoreFiles(
	ctx: ExtensionContext,
	host: RestoreHost,
	cp: CheckpointData,
	safe: boolean,
): Promise<casckpt.RestoreResult> {
	const cwd = ctx.cwd;
	const o = { store: host.config.store };
	const plan = await casckpt.restore(cwd, cp.snapshot, { ...o, dryRun: true, safe });
	const { keep, exclude, maxDirFiles } = host.config;
	const pre = await casckpt.snapshot(cwd, { ...o, keep, exclude, maxDirFiles, session: host.session(), message: `pi: before restore to ${cp.snapshot.slice(0, 12)}` });
	if (pre.id) host.appendEntry({ snapshot: pre.id, kind: "before-restore", session: host.session(), restoredTo: cp.snapshot });
	const paths = [...plan.changes.map((c) => c.path), ...(plan.kept ?? []).map((k) => k.path)];
	return withQueues(cwd, paths, () => casckpt.restore(cwd, cp.snapshot, { ...o, safe }));
}

/**
 * The whole flow for a fork or a tree jump to a point whose files CP holds:
 * the four choices, the preview, the before-restore checkpoint, the restore.
 */
export async function offerRestore(
	ctx: ExtensionContext,
	host: RestoreHost,
	cp: CheckpointData | undefined,
	where: string,
): Promise<Outcome> {
	if (!cp) {
		host.say(ctx, `casckpt: no checkpoint for ${where}; files left as they are`, "warning");
		return undefined;
	}
	try {
		const choice = await askChoice(ctx, host, where);
		if (choice === "cancel") return { cancel: true };
		if (choice === "conversation") return undefined;
		const mode = await askMode(ctx, host, cp);
		if (mode === "cancel") return { cancel: true };
		const r = await restoreFiles(ctx, host, cp, mode === "safe");
		const kept = r.kept?.length ? `, ${r.kept.length} kept` : "";
		host.say(ctx, `casckpt: restored ${r.restored_to.slice(0, 12)}: ${r.written} written, ${r.deleted} deleted${kept}`);
		return choice === "files" ? { cancel: true } : undefined;
	} catch (e) {
		// Never move the conversation away from files that could not be restored.
		host.say(ctx, `casckpt: restore failed, nothing navigated: ${(e as Error).message}`, "error");
		return { cancel: true };
	}
}
