import { resolve } from "node:path";
import { findBinary, platformPackage } from "./binary.js";
import type * as doc from "./documents.js";
import { CasckptError, documentOf, type Answer } from "./errors.js";
import {
  commandLine,
  projectFlags,
  type CallOptions,
  type CatOptions,
  type DiffOptions,
  type DirOptions,
  type ForgetOptions,
  type ListOptions,
  type LsOptions,
  type PolicyOptions,
  type PruneOptions,
  type ReadOptions,
  type RestoreOptions,
  type SnapshotOptions,
  type TurnsOptions,
  type UndoOptions,
} from "./options.js";
import { runProcess } from "./process.js";
import { Server, ServeEnded } from "./serve.js";

/** How a client finds and runs casckpt. */
export interface ClientOptions {
  /** The casckpt program (default: $CASCKPT_BIN, the platform package's binary, then casckpt on PATH). */
  binary?: string;
  /** The store (`--store`: a directory or s3://BUCKET[/PREFIX]); default: casckpt's own. */
  store?: string;
  /** The directory relative paths resolve against (default: process.cwd() at each call). */
  cwd?: string;
  /** The environment casckpt runs with (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Kill a command that runs longer than this (default: none): the call
   * fails with exit 124, and a resident server is killed with it (the
   * client goes on with a process per call). Each call may set its own.
   */
  timeoutMs?: number;
  /**
   * Keep one `casckpt serve` process for the client's calls (default
   * true): started at the first call, ended by close(). A binary without
   * serve, or a server that died, makes the client run a process per call.
   */
  resident?: boolean;
}

/**
 * A casckpt client: every command as an async method that gives the
 * document `casckpt --json` prints, typed, or throws CasckptError. Keep
 * one for a host that calls often (its calls share one resident `casckpt
 * serve`), and close() it when done.
 */
export class Casckpt {
  private readonly options: ClientOptions;
  private server: Server | undefined;
  private resident: boolean;

  constructor(options: ClientOptions = {}) {
    this.options = options;
    this.resident = options.resident ?? true;
  }

  /** Whether calls go to a resident server: "resident" until serve proved unavailable or died, then "process". */
  get mode(): "resident" | "process" {
    return this.resident ? "resident" : "process";
  }

  /** The resident server's process ID while one runs, else undefined. */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  /** snapshot DIR: records the directory's tree (a turn's start or end with session/turn/endTurn). */
  snapshot(dir: string, o: SnapshotOptions = {}): Promise<doc.Snapshot> {
    const flags = commandLine("snapshot", [
      ["-m", o.message], ["--keep", o.keep], ["--max-file-size-mb", o.maxFileSizeMb], ["--max-files", o.maxFiles],
      ["--exclude", o.exclude], ["--max-dir-files", o.maxDirFiles],
      ["--max-size-mb", o.maxSizeMb], ["--session", o.session], ["--turn", o.turn], ["--end-turn", o.endTurn],
      ["--here", o.here],
    ], [dir]);
    return this.run(flags, o) as Promise<doc.Snapshot>;
  }

  /** list DIR: the project's snapshots, newest first. */
  list(dir: string, o: ListOptions = {}): Promise<doc.List> {
    const args = commandLine("list", [["-n", o.n], ["--session", o.session], ...projectFlags(o)], [dir]);
    return this.run(args, o) as Promise<doc.List>;
  }

  /** turns DIR: the project's turns, newest first. */
  turns(dir: string, o: TurnsOptions = {}): Promise<doc.Turns> {
    return this.run(commandLine("turns", [["--session", o.session], ...projectFlags(o)], [dir]), o) as Promise<doc.Turns>;
  }

  /** diff DIR FROM [TO]: what changed from snapshot FROM to TO (default: the working tree). */
  diff(dir: string, from: string, o: DiffOptions = {}): Promise<doc.Diff> {
    const pos = o.to === undefined ? [dir, from] : [dir, from, o.to];
    const args = commandLine("diff", [["--stat", o.stat], ["--patch", o.patch], ["--semantic", o.semantic], ...projectFlags(o)], pos);
    return this.run(args, o) as Promise<doc.Diff>;
  }

  /** restore DIR SNAP [PATH...]: the tree (or paths) as snapshot SNAP has it, after a pre-restore snapshot. */
  restore(dir: string, snap: string, o: RestoreOptions = {}): Promise<doc.Restore> {
    const flags: Parameters<typeof commandLine>[1] = [
      ["--safe", o.safe], ["--dry-run", o.dryRun], ["--max-file-size-mb", o.maxFileSizeMb], ["--max-files", o.maxFiles],
      ["--fallback", o.fallback], ...projectFlags(o),
    ];
    return this.run(commandLine("restore", flags, [dir, snap, ...(o.paths ?? [])]), o) as Promise<doc.Restore>;
  }

  /** record-write DIR PATH...: records that the agent just wrote (or deleted) these paths. */
  recordWrite(dir: string, paths: readonly string[], o: DirOptions = {}): Promise<doc.RecordWrite> {
    return this.run(commandLine("record-write", [["--here", o.here]], [dir, ...paths]), o) as Promise<doc.RecordWrite>;
  }

  /** undo DIR [TURN]: reverts one turn's changes (default: the newest ended turn not yet undone). */
  undo(dir: string, o: UndoOptions = {}): Promise<doc.Undo> {
    const pos = o.turn === undefined ? [dir] : [dir, o.turn];
    const args = commandLine("undo", [["--dry-run", o.dryRun], ["--redo", o.redo], ["--here", o.here]], pos);
    return this.run(args, o) as Promise<doc.Undo>;
  }

  /** cat DIR SNAP PATH: a file as snapshot SNAP has it (content, or content_base64 when not UTF-8 text). */
  cat(dir: string, snap: string, path: string, o: CatOptions = {}): Promise<doc.Cat> {
    const flags = commandLine("cat", [["--fallback", o.fallback], ["--check", o.check], ...projectFlags(o)], [dir, snap, path]);
    return this.run(flags, o) as Promise<doc.Cat>;
  }

  /** ls DIR SNAP [PATH]: the files, links and directories of a snapshot. */
  ls(dir: string, snap: string, o: LsOptions = {}): Promise<doc.Ls> {
    const pos = o.path === undefined ? [dir, snap] : [dir, snap, o.path];
    return this.run(commandLine("ls", projectFlags(o), pos), o) as Promise<doc.Ls>;
  }

  /** log DIR PATH: the snapshots in which PATH changed, newest first. */
  log(dir: string, path: string, o: ReadOptions = {}): Promise<doc.Log> {
    return this.run(commandLine("log", projectFlags(o), [dir, path]), o) as Promise<doc.Log>;
  }

  /** pin DIR SNAP: keeps a snapshot from prune and --keep. */
  pin(dir: string, snap: string, o: DirOptions = {}): Promise<doc.Pin> {
    return this.run(commandLine("pin", [["--here", o.here]], [dir, snap]), o) as Promise<doc.Pin>;
  }

  /** unpin DIR SNAP */
  unpin(dir: string, snap: string, o: DirOptions = {}): Promise<doc.Unpin> {
    return this.run(commandLine("unpin", [["--here", o.here]], [dir, snap]), o) as Promise<doc.Unpin>;
  }

  /** forget DIR SNAP...: drops snapshots (gc frees their data). */
  forget(dir: string, snaps: readonly string[], o: ForgetOptions = {}): Promise<doc.Forget> {
    return this.run(commandLine("forget", [["--dry-run", o.dryRun], ["--here", o.here]], [dir, ...snaps]), o) as Promise<doc.Forget>;
  }

  /** status: the store's projects, size and problems. */
  status(o: CallOptions = {}): Promise<doc.Status> {
    return this.run(["status"], o) as Promise<doc.Status>;
  }

  /** prune: drops orphaned, stale and over-cap snapshots (PruneSkipped with auto inside the interval). */
  prune(o: PruneOptions = {}): Promise<doc.Prune | doc.PruneSkipped> {
    const flags = commandLine("prune", [
      ["--retention-days", o.retentionDays], ["--keep-orphans", o.keepOrphans], ["--max-size-mb", o.maxSizeMb],
      ["--auto", o.auto], ["--min-interval-hours", o.minIntervalHours], ["--dry-run", o.dryRun],
      ["--completed-days", o.completedDays], ["--failed-days", o.failedDays],
    ], []);
    return this.run(flags, o) as Promise<doc.Prune | doc.PruneSkipped>;
  }

  /** policy DIR: sets what the options name of the project's lifecycle and retention policy; gives the policy. */
  policy(dir: string, o: PolicyOptions = {}): Promise<doc.Policy> {
    const flags = commandLine("policy", [
      ["--lifecycle", o.lifecycle], ["--test", o.test === true], ["--no-test", o.test === false],
      ["--retention-days", o.retentionDays], ["--keep", o.keep],
      ["--cleanup", o.cleanup === true], ["--no-cleanup", o.cleanup === false], ["--here", o.here],
    ], [dir]);
    return this.run(flags, o) as Promise<doc.Policy>;
  }

  /** gc: deletes the data no snapshot refers to. */
  gc(o: CallOptions = {}): Promise<doc.GC> {
    return this.run(["gc"], o) as Promise<doc.GC>;
  }

  /** verify: checks every snapshot's data; damage throws CasckptError (exit 1) whose document is the Verify. */
  verify(o: CallOptions = {}): Promise<doc.Verify> {
    return this.run(["verify"], o) as Promise<doc.Verify>;
  }

  /** version: the binary's version. */
  version(o: CallOptions = {}): Promise<doc.Version> {
    return this.run(["version"], o) as Promise<doc.Version>;
  }

  /**
   * Runs one command line (without the program, `--store` and `--json`)
   * and gives its document; throws CasckptError when it fails.
   */
  async run(args: readonly string[], o: CallOptions = {}): Promise<unknown> {
    return documentOf(await this.answer(args, o), args);
  }

  /** Ends the resident server, if one runs; the client may go on (a later call starts another). */
  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    await s?.close();
  }

  /** The answer to args: from the resident server, else from a process of its own. */
  private async answer(args: readonly string[], o: CallOptions): Promise<Answer> {
    const env = this.options.env ?? process.env;
    const binary = findBinary(this.options.binary, env);
    if (binary === undefined) {
      throw new CasckptError(
        127,
        `casckpt binary not found: set CASCKPT_BIN, or npm install casckpt (its platform package ${platformPackage()} ` +
          `carries the binary; not with --omit=optional), or put casckpt on PATH`,
        args,
      );
    }
    const cwd = resolve(o.cwd ?? this.options.cwd ?? ".");
    const timeoutMs = o.timeoutMs ?? this.options.timeoutMs;
    if (this.resident) {
      this.server ??= new Server(binary, this.options.store, env);
      try {
        return await this.server.request(args, cwd, o.now, timeoutMs);
      } catch (e) {
        if (!(e instanceof ServeEnded)) {
          throw e;
        }
        this.resident = false; // from now on a process per call
        this.server = undefined;
        if (!e.notRun) {
          throw new CasckptError(1, e.message, args);
        }
      }
    }
    return runProcess(args, { binary, store: this.options.store, cwd, env, now: o.now, timeoutMs });
  }
}
