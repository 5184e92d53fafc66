// The options of each command, and the command lines they make.

/** What every call may set: where relative paths resolve, and the clock. */
export interface CallOptions {
  /** The directory relative paths (and DIR) resolve against; default: the client's, else process.cwd(). */
  cwd?: string;
  /** An RFC 3339 time that stands for the clock in this call alone (CASCKPT_NOW). */
  now?: string;
  /** Kill the command after this many milliseconds (CasckptError, exit 124); default: the client's. */
  timeoutMs?: number;
}

/** `--here`: take DIR as a project of its own, not the known project above it. */
export interface HereOption {
  here?: boolean;
}

/** `--machine M`: read machine M's project at this path (a bucket store). */
export interface MachineOption {
  machine?: string;
}

/** Options of snapshot. */
export interface SnapshotOptions extends CallOptions, HereOption {
  /** `-m REASON` */
  message?: string;
  keep?: number;
  maxFileSizeMb?: number;
  maxFiles?: number;
  /** `--exclude PATTERN` for each: gitignore patterns left out as the default excludes are (recorded with the snapshot) */
  exclude?: readonly string[];
  /** `--max-dir-files N`: leave out whole each directory of N files or more that git tracks none of (recorded with the snapshot) */
  maxDirFiles?: number;
  maxSizeMb?: number;
  session?: string;
  turn?: string;
  /** `--end-turn` (needs turn) */
  endTurn?: boolean;
}

/** Options of list. */
export interface ListOptions extends CallOptions, HereOption, MachineOption {
  /** `-n N`: the N newest */
  n?: number;
  session?: string;
}

/** Options of turns. */
export interface TurnsOptions extends CallOptions, HereOption, MachineOption {
  session?: string;
}

/** Options of diff. */
export interface DiffOptions extends CallOptions, HereOption, MachineOption {
  /** The second snapshot (default: the working tree). */
  to?: string;
  stat?: boolean;
  /** Each file's unified diff, in `files[].patch`. */
  patch?: boolean;
  /**
   * `--semantic`: JSON files by JSONPath instead of lines. The document
   * carries `files[].json_changes` with or without it (not with stat).
   */
  semantic?: boolean;
}

/** Options of restore. */
export interface RestoreOptions extends CallOptions, HereOption, MachineOption {
  /** Restore only these paths (relative to DIR). */
  paths?: readonly string[];
  /** `--safe`: restore only what agents changed. */
  safe?: boolean;
  dryRun?: boolean;
  maxFileSizeMb?: number;
  maxFiles?: number;
  /** `--fallback`: if SNAP's data is damaged, restore the newest older intact snapshot (`tried` names those passed over). */
  fallback?: boolean;
}

/** Options of undo. */
export interface UndoOptions extends CallOptions, HereOption {
  /** The turn to undo (default: the newest ended turn not yet undone). */
  turn?: string;
  dryRun?: boolean;
  /** `--redo`: re-apply the newest undo. */
  redo?: boolean;
}

/** Options of forget. */
export interface ForgetOptions extends CallOptions, HereOption {
  /** `--dry-run`: say what would be forgotten and change nothing. */
  dryRun?: boolean;
}

/** Options of prune. */
export interface PruneOptions extends CallOptions {
  retentionDays?: number;
  keepOrphans?: boolean;
  maxSizeMb?: number;
  auto?: boolean;
  minIntervalHours?: number;
  dryRun?: boolean;
  /** `--completed-days N`: drop completed projects N days after they completed (0: never; default 7). */
  completedDays?: number;
  /** `--failed-days N`: drop failed projects N days after they failed (0: never; default 30). */
  failedDays?: number;
}

/** Options of policy: each set field changes what it names; none set, policy gives the policy unchanged. */
export interface PolicyOptions extends CallOptions, HereOption {
  /** `--lifecycle`: the project's state. */
  lifecycle?: "running" | "completed" | "failed";
  /** true: `--test` (dropped by the first prune after it finishes); false: `--no-test`. */
  test?: boolean;
  /** `--retention-days N`: days after it completed or failed that prune drops it (0: clears, prune's). */
  retentionDays?: number;
  /** `--keep N`: snapshots kept by a snapshot that names no keep (0: clears). */
  keep?: number;
  /** true: `--cleanup` (the default); false: `--no-cleanup` (no rule drops the project's snapshots). */
  cleanup?: boolean;
}

/** Options of ls. */
export interface LsOptions extends CallOptions, HereOption, MachineOption {
  /** A directory of the snapshot to list (default: its top). */
  path?: string;
}

/** Options of the commands that take a project and nothing else (pin, record-write, ...). */
export interface DirOptions extends CallOptions, HereOption {}

/** Options of the commands that read a project (cat, log). */
export interface ReadOptions extends CallOptions, HereOption, MachineOption {}

/** Options of cat. */
export interface CatOptions extends ReadOptions {
  /** `--fallback`: if SNAP's copy is damaged (or fails check), use the newest older snapshot's intact copy (`tried` names those passed over). */
  fallback?: boolean;
  /** `--check json` (with fallback): also pass over a copy that does not parse as JSON. */
  check?: "json";
}

/** A flag's value: a string or number flag with its value, a true boolean flag alone, a repeated flag once per string. */
type Value = string | number | boolean | readonly string[] | undefined;

/**
 * A command line: the command, the flags that are set (in the order
 * given), then `--` and the positional arguments, so that a path or
 * reference that starts with `-` is never read as a flag.
 */
export function commandLine(command: string, flags: [string, Value][], positional: readonly string[]): string[] {
  const args = [command];
  for (const [flag, v] of flags) {
    if (v === true) {
      args.push(flag);
    } else if (typeof v === "string" || typeof v === "number") {
      args.push(flag, String(v));
    } else if (Array.isArray(v)) {
      for (const e of v) args.push(flag, e);
    }
  }
  return positional.length > 0 ? [...args, "--", ...positional] : args;
}

/** The flags of here and machine. */
export function projectFlags(o: HereOption & MachineOption): [string, Value][] {
  return [
    ["--machine", o.machine],
    ["--here", o.here],
  ];
}
