import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";
import type { Answer } from "./errors.js";
import { globalFlags } from "./process.js";

/** A request waiting for its answer. */
interface Pending {
  resolve: (a: Answer) => void;
  reject: (e: Error) => void;
}

/**
 * Why a resident server gave no answer: Unavailable when the binary has no
 * serve command (it exited 2 before answering anything; nothing ran, so
 * the request may go to a process of its own), Died when it ended with
 * requests in flight (they may or may not have run).
 */
export class ServeEnded extends Error {
  constructor(
    message: string,
    readonly unavailable: boolean,
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
        const unavailable = !this.answered && code === 2;
        const why = unavailable
          ? `casckpt serve is not available: ${this.stderr.trim()}`
          : `casckpt serve ended (${signal ?? `exit ${code}`}) before answering; the command may or may not have run`;
        this.end(why, unavailable, resolve);
      });
    });
    this.idle();
  }

  /** Sends one request and gives its answer; rejects with ServeEnded when the server ends first. */
  request(args: readonly string[], cwd: string, now: string | undefined): Promise<Answer> {
    if (this.ended) {
      return Promise.reject(this.ended);
    }
    const id = this.nextId++;
    const req: Record<string, unknown> = { id, args, cwd };
    if (now !== undefined) {
      req.now = now;
    }
    const answer = new Promise<Answer>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.busy();
    this.child.stdin.write(JSON.stringify(req) + "\n");
    return answer;
  }

  /** Ends the server (end of its stdin) and waits for it to exit. */
  async close(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
  }

  /** Kills the server at once (for a host that is going away). */
  kill(): void {
    this.child.kill("SIGKILL");
  }

  /** Settles the request that answer line names. */
  private answer(line: string): void {
    let a: { id?: unknown; exit?: unknown; result?: unknown; error?: unknown };
    try {
      a = JSON.parse(line);
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
  private end(why: string, unavailable: boolean, done: () => void): void {
    this.ended ??= new ServeEnded(why, unavailable);
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
