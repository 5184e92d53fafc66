import { spawn } from "node:child_process";
import { CasckptError, type Answer } from "./errors.js";

/** Where and how one command runs: the binary, store, directory, environment and clock. */
export interface Invocation {
  binary: string;
  store?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  now?: string;
  /** Kill the command after this many milliseconds (exit 124). */
  timeoutMs?: number;
}

/** The global flags every command line starts with. */
export function globalFlags(store: string | undefined): string[] {
  return store ? ["--store", store] : [];
}

/**
 * Runs `casckpt --json ARGS` as a process of its own and gives its
 * answer: the exit status, the document on stdout (null when none) and,
 * when it failed, the one line on stderr without `casckpt: `. A binary
 * that cannot start is a CasckptError with exit 127; one that runs past
 * timeoutMs is killed and answers exit 124.
 */
export function runProcess(args: readonly string[], inv: Invocation): Promise<Answer> {
  const env = inv.now === undefined ? inv.env : { ...inv.env, CASCKPT_NOW: inv.now };
  return new Promise((resolve, reject) => {
    const child = spawn(inv.binary, [...globalFlags(inv.store), "--json", ...args], {
      cwd: inv.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e) => reject(new CasckptError(127, `casckpt could not run: ${inv.binary}: ${e.message}`, args)));
    let timedOut = false;
    const timer = inv.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, inv.timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        resolve({ exit: 124, result: null, error: timeoutMessage(inv.timeoutMs!) });
        return;
      }
      const stdout = Buffer.concat(out).toString("utf8").trim();
      let result: unknown = null;
      try {
        result = stdout === "" ? null : JSON.parse(stdout);
      } catch {
        result = null;
      }
      const exit = code ?? (signal === "SIGINT" ? 130 : 143);
      resolve({ exit, result, error: exit === 0 ? null : lastLine(Buffer.concat(err).toString("utf8")) });
    });
  });
}

/** The last line of stderr that says what failed, without `casckpt: `; null when none. */
function lastLine(stderr: string): string | null {
  const lines = stderr.split("\n").filter((l) => l.startsWith("casckpt: "));
  const line = lines.at(-1);
  return line === undefined ? null : line.slice("casckpt: ".length);
}

/** The one line of a command killed at its timeout (it may or may not have done its work). */
export function timeoutMessage(ms: number): string {
  return `timed out after ${ms} ms (store busy?); killed, so it may or may not have run`;
}
