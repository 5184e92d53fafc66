// Where checkpoints sit in pi's session tree. Each checkpoint is a custom
// entry (pi.appendEntry) at the place in the tree where the files were
// snapshotted, so the files of any entry are those of the nearest
// checkpoint entry on its path to the root: no timestamps are matched.

/** The custom entry type the extension appends. */
export const ENTRY_TYPE = "casckpt-checkpoint";

/** What a checkpoint entry holds. */
export interface CheckpointData {
	/** The casckpt snapshot id. */
	snapshot: string;
	/** Why it was taken. */
	kind: "turn-start" | "turn-end" | "before-restore";
	/** The casckpt turn id (turn-start and turn-end). */
	turn?: string;
	/** The pi session it was taken in. */
	session: string;
	/** For before-restore: the snapshot restored to. */
	restoredTo?: string;
}

/** The minimal shape of a session entry this module reads. */
export interface EntryLike {
	type: string;
	id: string;
	parentId: string | null;
	customType?: string;
	data?: unknown;
	message?: { role?: string };
}

/** The checkpoint an entry holds, or undefined. */
export function checkpointOf(e: EntryLike | undefined): CheckpointData | undefined {
	if (!e || e.type !== "custom" || e.customType !== ENTRY_TYPE) return undefined;
	const d = e.data as CheckpointData | undefined;
	return d && typeof d.snapshot === "string" ? d : undefined;
}

/**
 * The checkpoint that holds the files as they were at entry ID: the nearest
 * checkpoint entry on the path from ID (itself included) to the root.
 */
export function checkpointAt(entries: EntryLike[], id: string | null): CheckpointData | undefined {
	const byId = new Map(entries.map((e) => [e.id, e]));
	for (let e = id ? byId.get(id) : undefined; e; e = e.parentId ? byId.get(e.parentId) : undefined) {
		const cp = checkpointOf(e);
		if (cp) return cp;
	}
	return undefined;
}

/**
 * The entry whose files a navigation to TARGET lands on: a user message's
 * parent (pi puts the leaf there and the message back in the editor), else
 * TARGET itself.
 */
export function landingEntry(entries: EntryLike[], target: string): string | null {
	const e = entries.find((x) => x.id === target);
	if (e && e.type === "message" && e.message?.role === "user") return e.parentId;
	return target;
}

/** The turn ids of the checkpoints on a branch, oldest first, each once. */
export function turnsOnBranch(branch: EntryLike[]): string[] {
	const seen = new Set<string>();
	for (const e of branch) {
		const t = checkpointOf(e)?.turn;
		if (t) seen.add(t);
	}
	return [...seen];
}
