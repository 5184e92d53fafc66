// The one module that talks to casckpt: the TypeScript client
// (clients/typescript, package "casckpt"), one resident client per store
// (a `casckpt serve` process, or a process per call where serve is not
// there), closed when pi ends the session.
import { Casckpt, type Diff, type Restore, type Snapshot, type Turn, type Undo } from "casckpt";

export { CasckptError } from "casckpt";
export type { Turn };
/** `snapshot --json`. */
export type SnapshotResult = Snapshot;
/** `diff --json`. */
export type DiffResult = Diff;
/** `restore --json`. */
export type RestoreResult = Restore;
/** `undo --json`. */
export type UndoResult = Undo;

/** Options every call takes: the store. */
export interface CallOptions {
	/** The store (`--store`); casckpt's own default when unset. */
	store?: string;
}

const clients = new Map<string, Casckpt>();

/** The client of STORE, started at its first call. */
function client(o: CallOptions): Casckpt {
	const key = o.store ?? "";
	let c = clients.get(key);
	if (!c) {
		c = new Casckpt({ store: o.store });
		clients.set(key, c);
	}
	return c;
}

/** Ends every client's resident process. */
export async function closeAll(): Promise<void> {
	const all = [...clients.values()];
	clients.clear();
	await Promise.all(all.map((c) => c.close()));
}

/** The exclusions every checkpoint is taken with (`snapshot --exclude`, `--max-dir-files`). */
export interface Exclusions {
	exclude?: readonly string[];
	maxDirFiles?: number;
}

/** Snapshots DIR, labelled with a session and a turn, leaving out what the exclusions say (recorded with it). */
export function snapshot(
	dir: string,
	o: CallOptions & Exclusions & { message?: string; session?: string; turn?: string; endTurn?: boolean; keep?: number } = {},
): Promise<SnapshotResult> {
	return client(o).snapshot(dir, {
		message: o.message, session: o.session, turn: o.turn, endTurn: o.endTurn, keep: o.keep,
		exclude: o.exclude, maxDirFiles: o.maxDirFiles || undefined,
	});
}

/** The project's turns, newest first; only SESSION's with `session`. */
export function turns(dir: string, o: CallOptions & { session?: string } = {}): Promise<Turn[]> {
	return client(o).turns(dir, { session: o.session });
}

/** What changed from SNAP to SNAP2 (or to the working tree). */
export function diff(dir: string, snap: string, snap2?: string, o: CallOptions = {}): Promise<DiffResult> {
	return client(o).diff(dir, snap, { to: snap2 });
}

/** Restores DIR to SNAP (only PATHS when given). */
export function restore(
	dir: string,
	snap: string,
	o: CallOptions & { safe?: boolean; dryRun?: boolean; paths?: string[] } = {},
): Promise<RestoreResult> {
	return client(o).restore(dir, snap, { safe: o.safe, dryRun: o.dryRun, paths: o.paths });
}

/** Reverts one turn (the newest ended one when TURN is unset). */
export function undo(dir: string, o: CallOptions & { turn?: string; dryRun?: boolean } = {}): Promise<UndoResult> {
	return client(o).undo(dir, { turn: o.turn, dryRun: o.dryRun });
}

/** Records that the agent has just written PATHS. */
export function recordWrite(dir: string, paths: string[], o: CallOptions = {}): Promise<{ recorded: number }> {
	return client(o).recordWrite(dir, paths);
}
