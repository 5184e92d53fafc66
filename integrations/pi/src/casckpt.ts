// The one module that talks to casckpt. Until the TypeScript client
// (clients/typescript, package "casckpt") is merged, it runs
// `casckpt --json` itself with the same function names and errors, so that
// switching to the client is a change of this file alone.
import { execFile } from "node:child_process";

/** A failed casckpt command: its exit status and its one-line message. */
export class CasckptError extends Error {
	/** The exit status (1 refused or failed, 2 usage, 130 interrupted). */
	readonly exit: number;
	constructor(message: string, exit: number) {
		super(message);
		this.name = "CasckptError";
		this.exit = exit;
	}
}

/** Options every call takes: the store and the binary. */
export interface CallOptions {
	/** The store (`--store`); casckpt's own default when unset. */
	store?: string;
	/** The binary; default `$CASCKPT_BIN`, then `casckpt` on PATH. */
	bin?: string;
}

/** `snapshot --json`. */
export interface SnapshotResult {
	created: boolean;
	id: string | null;
	project: string;
	files: number;
	bytes: number;
	session: string | null;
	turn: string | null;
}

/** One element of `turns --json`. */
export interface Turn {
	turn: string;
	session: string | null;
	start: string;
	end: string | null;
	started: string;
	ended: string | null;
	files_changed: number;
	insertions: number;
	deletions: number;
	dropped: string[];
	title: string | null;
	interrupted: boolean;
	undone_by: string | null;
}

/** `diff --json`. */
export interface DiffResult {
	from: string;
	to: string;
	files: { path: string; status: string; insertions: number; deletions: number; binary: boolean }[];
	files_changed: number;
	insertions: number;
	deletions: number;
}

/** `restore --json`. */
export interface RestoreResult {
	restored_to: string;
	pre_restore_id: string | null;
	written: number;
	deleted: number;
	dry_run: boolean;
	changes: { path: string; action: "write" | "delete" }[];
	skipped: string[];
	safe?: boolean;
	kept?: { path: string; reason: string }[];
}

/** `undo --json`. */
export interface UndoResult {
	turn: string;
	pre_undo_id: string | null;
	reverted: string[];
	merged: string[];
	conflicts: { path: string; reason: string }[];
	dry_run: boolean;
}

/** Runs `casckpt --json ARGS` and returns its document. */
async function run<T>(args: string[], opts: CallOptions): Promise<T> {
	const bin = opts.bin ?? process.env.CASCKPT_BIN ?? "casckpt";
	const full = [...(opts.store ? ["--store", opts.store] : []), ...args, "--json"];
	return new Promise<T>((resolve, reject) => {
		execFile(bin, full, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
			let doc: any;
			try {
				doc = JSON.parse(stdout);
			} catch {
				const why = (stderr || String(err?.message ?? "no output")).trim();
				reject(new CasckptError(`casckpt ${args[0]}: ${why}`, typeof err?.code === "number" ? err.code : 1));
				return;
			}
			if (err || (doc && typeof doc === "object" && !Array.isArray(doc) && "error" in doc && "exit" in doc)) {
				reject(new CasckptError(String(doc?.error ?? stderr).trim(), Number(doc?.exit ?? err?.code ?? 1)));
				return;
			}
			resolve(doc as T);
		});
	});
}

/** Snapshots DIR, labelled with a session and a turn. */
export function snapshot(
	dir: string,
	o: CallOptions & { message?: string; session?: string; turn?: string; endTurn?: boolean; maxFileSizeMb?: number } = {},
): Promise<SnapshotResult> {
	const a = ["snapshot", dir];
	if (o.message) a.push("-m", o.message);
	if (o.session) a.push("--session", o.session);
	if (o.turn) a.push("--turn", o.turn);
	if (o.endTurn) a.push("--end-turn");
	if (o.maxFileSizeMb !== undefined) a.push("--max-file-size-mb", String(o.maxFileSizeMb));
	return run(a, o);
}

/** The project's turns, newest first; only SESSION's with `session`. */
export function turns(dir: string, o: CallOptions & { session?: string } = {}): Promise<Turn[]> {
	return run(["turns", dir, ...(o.session ? ["--session", o.session] : [])], o);
}

/** What changed from SNAP to SNAP2 (or to the working tree). */
export function diff(dir: string, snap: string, snap2?: string, o: CallOptions = {}): Promise<DiffResult> {
	return run(["diff", dir, snap, ...(snap2 ? [snap2] : [])], o);
}

/** Restores DIR to SNAP (only PATHS when given). */
export function restore(
	dir: string,
	snap: string,
	o: CallOptions & { safe?: boolean; dryRun?: boolean; paths?: string[] } = {},
): Promise<RestoreResult> {
	const a = ["restore", dir, snap, ...(o.paths ?? [])];
	if (o.safe) a.push("--safe");
	if (o.dryRun) a.push("--dry-run");
	return run(a, o);
}

/** Reverts one turn (the newest ended one when TURN is unset). */
export function undo(dir: string, o: CallOptions & { turn?: string; dryRun?: boolean } = {}): Promise<UndoResult> {
	return run(["undo", dir, ...(o.turn ? [o.turn] : []), ...(o.dryRun ? ["--dry-run"] : [])], o);
}

/** Records that the agent has just written PATHS. */
export function recordWrite(dir: string, paths: string[], o: CallOptions = {}): Promise<{ recorded: number }> {
	return run(["record-write", dir, ...paths], o);
}
