// Test support: the real casckpt binary, sandboxes, and what a call gave.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CasckptError } from "../src/index.js";

/** The repository's root (this file is build/test/helpers.js under clients/typescript). */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

let built: string | undefined;

/** The casckpt binary the tests run: $CASCKPT_BIN, else one go build makes from this repository, once per process. */
export function casckptBin(): string {
  if (process.env.CASCKPT_BIN) {
    return process.env.CASCKPT_BIN;
  }
  if (built === undefined) {
    const out = join(mkdtempSync(join(tmpdir(), "casckpt-ts-bin-")), "casckpt");
    execFileSync("go", ["build", "-o", out, "./cmd/casckpt"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
    built = out;
  }
  return built;
}

/** A scratch directory, removed when the process exits. */
export function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "casckpt-ts-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes files (name → content) under dir, making their directories. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
}

/** What one command gave: its exit status, its document (null for none), and its one line when it failed. */
export interface Outcome {
  exit: number;
  doc: unknown;
  error: string | null;
}

/** Runs `casckpt --store STORE --json ARGS` in cwd with the clock at now: the reference every client call must equal. */
export function reference(bin: string, store: string, cwd: string, args: string[], now: string): Outcome {
  const r = spawnSync(bin, ["--store", store, "--json", ...args], { cwd, env: { ...process.env, CASCKPT_NOW: now }, encoding: "utf8" });
  const doc = r.stdout.trim() === "" ? null : JSON.parse(r.stdout);
  if (r.status === 0) {
    return { exit: 0, doc, error: null };
  }
  if (doc !== null && typeof doc.error === "string" && typeof doc.exit === "number") {
    return { exit: r.status ?? -1, doc: null, error: doc.error };
  }
  // A document printed before failing (verify with damage): the one line is on stderr.
  const line = r.stderr.split("\n").filter((l) => l.startsWith("casckpt: ")).at(-1) ?? "";
  return { exit: r.status ?? -1, doc, error: line.slice("casckpt: ".length) };
}

/** The outcome of a client call: its document, or the CasckptError it threw. */
export async function outcome(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { exit: 0, doc: await call(), error: null };
  } catch (e) {
    if (!(e instanceof CasckptError)) {
      throw e;
    }
    return { exit: e.exit, doc: e.document ?? null, error: e.message };
  }
}

/**
 * outcomes with each snapshot ID (64 hex digits, random per snapshot)
 * replaced by ID<n> in the order first met, and each short ID (its first
 * 12 digits) by SHORT<n>, and the store's sizes (bytes_freed,
 * size_bytes: packs hold compressed records with those random IDs) by
 * their type, so that two runs of one scenario compare equal.
 */
export function normalize(outcomes: Outcome[]): unknown {
  const ids = new Map<string, number>();
  const sizes = (k: string, v: unknown) => ((k === "bytes_freed" || k === "size_bytes") && typeof v === "number" ? "<number>" : v);
  const text = JSON.stringify(outcomes, sizes).replace(/\b[0-9a-f]{64}\b/g, (id) => {
    if (!ids.has(id)) {
      ids.set(id, ids.size + 1);
    }
    return `ID${ids.get(id)}`;
  });
  return JSON.parse(
    text.replace(/\b[0-9a-f]{12}\b/g, (short) => {
      for (const [id, n] of ids) {
        if (id.startsWith(short)) {
          return `SHORT${n}`;
        }
      }
      return short;
    }),
  );
}
