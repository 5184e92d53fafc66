import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { ServeAnswer } from "./documents.js";
import type { Answer } from "./errors.js";
import { globalFlags, timeoutMessage } from "./process.js";

/** A request waiting for its answer. */
interface Pending {
  resolve: (a: Answer) => void;
  reject: (e: Error) => void;
}

/**
 * Why a resident server gave no answer. notRun says the request never
 * reached a server (the binary has no serve command: it exited 2 before
 * answering anything; or the server had ended before the request was
 * sent), so it may go to a process of its own; else the server ended
 * with it in flight, and it may or may not have run.
 */
export class ServeEnded extends Error {
  constructor(
    message: string,
    readonly notRun: boolean,
  ) {
    super(message);
    this.name = "ServeEnded";
  }
}

/**
 * One `casckpt serve` process: requests go out one JSON line each, with
 * an id, and each answer line settles the request of its id. The process
 * does not keep Node running while no request is in flight.
 */
export class Server {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private answered = false;
  private stderr = "";
  /** Set once the process has ended: why. */
  ended: ServeEnded | undefined;
  private readonly exited: Promise<void>;

  constructor(binary: string, store: string | undefined, env: NodeJS.ProcessEnv) {
    this.child = spawn(binary, [...globalFlags(store), "serve"], { env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdin.on("error", () => {}); // a dead server's EPIPE: "close" says why
    createInterface({ input: this.child.stdout }).on("line", (line) => this.answer(line));
    this.child.stderr.on("data", (b: Buffer) => {
      this.stderr = (this.stderr + b.toString("utf8")).slice(-4096);
    });
    this.exited = new Promise((resolve) => {
      this.child.on("error", (e) => this.end(`casckpt serve could not start: ${e.message}`, true, resolve));
      this.child.on("close", (code, signal) => {
        // An older binary: a usage error naming serve, before any answer.
        const unavailable = !this.answered && code === 2 && this.stderr.includes('unknown command "serve"');
        const why = unavailable
          ? `casckpt serve is not available: ${this.stderr.trim()}`
          : `casckpt serve ended (${signal ?? `exit ${code}`}) before answering; the command may or may not have run`;
        this.end(why, unavailable, resolve);
      });
    });
    this.idle();
  }

  /** The server's process ID (undefined when it could not start). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Sends one request and gives its answer; rejects with ServeEnded when
   * the server ends first.
   */
  request(args: readonly string[], cwd: string, now: string | undefined, timeoutMs?: number): Promise<Answer> {
    if (this.ended) {
      return Promise.reject(new ServeEnded(this.ended.message, true));
    }
    const id = this.nextId++;
    const req: Record<string, unknown> = { id, args, cwd };
    if (now !== undefined) {
      req.now = now;
    }
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.busy();
    this.child.stdin.write(JSON.stringify(req) + "\n");
    if (timeoutMs === undefined) {
      return answer;
    }
    // Past its timeout the request is answered 124 and the server killed
    // (it cannot be told to stop one request); the others in flight end with it.
    const timer = setTimeout(() => {
      const p = this.pending.get(id);
      this.pending.delete(id);
      p?.resolve({ exit: 124, result: null, error: timeoutMessage(timeoutMs) });
      this.ended ??= new ServeEnded("casckpt serve was killed at a request's timeout", false);
      this.kill();
    }, timeoutMs);
    return answer.finally(() => clearTimeout(timer));
  }

  /** Ends the server (end of its stdin) and waits for it to exit. */
  async close(): Promise<void> {
    this.busy(); // Node waits for the exit
    this.child.stdin.end();
    await this.exited;
  }

  /** Kills the server at once (for a host that is going away). */
  kill(): void {
    this.child.kill("SIGKILL");
  }

  /** Settles the request that answer line names. */
  private answer(line: string): void {
    let a: Partial<ServeAnswer>;
    try {
      a = JSON.parse(line) as Partial<ServeAnswer>;
    } catch {
      return; // not an answer; serve writes only answers on stdout
    }
    const p = typeof a.id === "number" ? this.pending.get(a.id) : undefined;
    if (!p) {
      return;
    }
    this.answered = true;
    this.pending.delete(a.id as number);
    p.resolve({
      exit: typeof a.exit === "number" ? a.exit : 1,
      result: a.result ?? null,
      error: typeof a.error === "string" ? a.error : null,
    });
    if (this.pending.size === 0) {
      this.idle();
    }
  }

  /** Records why the server ended and rejects every request in flight. */
  private end(why: string, notRun: boolean, done: () => void): void {
    this.ended ??= new ServeEnded(why, notRun);
    for (const p of this.pending.values()) {
      p.reject(this.ended);
    }
    this.pending.clear();
    done();
  }

  /** Lets Node exit while no request is in flight (the server ends with its stdin). */
  private idle(): void {
    this.child.unref();
    unref(this.child.stdout);
    unref(this.child.stderr);
    unref(this.child.stdin);
  }

  /** Keeps Node running while a request is in flight. */
  private busy(): void {
    this.child.ref();
    ref(this.child.stdout);
    ref(this.child.stderr);
    ref(this.child.stdin);
  }
}

/** A stream that may hold Node's event loop (a pipe is a net.Socket). */
type Refable = { ref?: () => void; unref?: () => void };

function unref(s: object): void {
  (s as Refable).unref?.();
}

function ref(s: object): void {
  (s as Refable).ref?.();
}
