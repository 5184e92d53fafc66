// Every command as a plain function: each call runs one casckpt process.
// A host that calls often keeps a Casckpt instead (one resident server).

import { Casckpt, type ClientOptions } from "./client.js";
import type * as doc from "./documents.js";
import type * as o from "./options.js";

/** Where a plain function finds casckpt: the binary, the store and the environment. */
export type ProcessOptions = Omit<ClientOptions, "resident">;

/** A client that runs each call as a process of its own. */
function once(p: ProcessOptions): Casckpt {
  return new Casckpt({ binary: p.binary, store: p.store, cwd: p.cwd, env: p.env, timeoutMs: p.timeoutMs, resident: false });
}

/** Casckpt.snapshot as one process. */
export const snapshot = (dir: string, p: o.SnapshotOptions & ProcessOptions = {}): Promise<doc.Snapshot> => once(p).snapshot(dir, p);
/** Casckpt.list as one process. */
export const list = (dir: string, p: o.ListOptions & ProcessOptions = {}): Promise<doc.List> => once(p).list(dir, p);
/** Casckpt.turns as one process. */
export const turns = (dir: string, p: o.TurnsOptions & ProcessOptions = {}): Promise<doc.Turns> => once(p).turns(dir, p);
/** Casckpt.diff as one process. */
export const diff = (dir: string, from: string, p: o.DiffOptions & ProcessOptions = {}): Promise<doc.Diff> =>
  once(p).diff(dir, from, p);
/** Casckpt.restore as one process. */
export const restore = (dir: string, snap: string, p: o.RestoreOptions & ProcessOptions = {}): Promise<doc.Restore> =>
  once(p).restore(dir, snap, p);
/** Casckpt.recordWrite as one process. */
export const recordWrite = (dir: string, paths: readonly string[], p: o.DirOptions & ProcessOptions = {}): Promise<doc.RecordWrite> =>
  once(p).recordWrite(dir, paths, p);
/** Casckpt.undo as one process. */
export const undo = (dir: string, p: o.UndoOptions & ProcessOptions = {}): Promise<doc.Undo> => once(p).undo(dir, p);
/** Casckpt.cat as one process. */
export const cat = (dir: string, snap: string, path: string, p: o.CatOptions & ProcessOptions = {}): Promise<doc.Cat> =>
  once(p).cat(dir, snap, path, p);
/** Casckpt.ls as one process. */
export const ls = (dir: string, snap: string, p: o.LsOptions & ProcessOptions = {}): Promise<doc.Ls> => once(p).ls(dir, snap, p);
/** Casckpt.log as one process. */
export const log = (dir: string, path: string, p: o.ReadOptions & ProcessOptions = {}): Promise<doc.Log> =>
  once(p).log(dir, path, p);
/** Casckpt.pin as one process. */
export const pin = (dir: string, snap: string, p: o.DirOptions & ProcessOptions = {}): Promise<doc.Pin> => once(p).pin(dir, snap, p);
/** Casckpt.unpin as one process. */
export const unpin = (dir: string, snap: string, p: o.DirOptions & ProcessOptions = {}): Promise<doc.Unpin> =>
  once(p).unpin(dir, snap, p);
/** Casckpt.forget as one process. */
export const forget = (dir: string, snaps: readonly string[], p: o.ForgetOptions & ProcessOptions = {}): Promise<doc.Forget> =>
  once(p).forget(dir, snaps, p);
/** Casckpt.status as one process. */
export const status = (p: o.CallOptions & ProcessOptions = {}): Promise<doc.Status> => once(p).status(p);
/** Casckpt.prune as one process. */
export const prune = (p: o.PruneOptions & ProcessOptions = {}): Promise<doc.Prune | doc.PruneSkipped> => once(p).prune(p);
/** Casckpt.policy as one process. */
export const policy = (dir: string, p: o.PolicyOptions & ProcessOptions = {}): Promise<doc.Policy> => once(p).policy(dir, p);
/** Casckpt.gc as one process. */
export const gc = (p: o.CallOptions & ProcessOptions = {}): Promise<doc.GC> => once(p).gc(p);
/** Casckpt.verify as one process. */
export const verify = (p: o.CallOptions & ProcessOptions = {}): Promise<doc.Verify> => once(p).verify(p);
/** Casckpt.version as one process. */
export const version = (p: o.CallOptions & ProcessOptions = {}): Promise<doc.Version> => once(p).version(p);
