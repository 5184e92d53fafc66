// What the end-to-end tests share: the casckpt binary, a PATH without git,
// a temporary pi home with the scripted provider, and a driver for pi's
// RPC mode that answers the extension's dialogs from a list.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** integrations/pi. */
export const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The repository root. */
export const REPO = path.resolve(PKG, "..", "..");
/** The extension as pi loads it. */
export const EXTENSION = path.join(PKG, "dist", "src", "index.js");
/** The real pi, from the committed lockfile. */
export const PI_BIN = path.join(PKG, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");

let built: string | undefined;

/** The casckpt binary: $CASCKPT_BIN, else built from this repository once. */
export function casckptBin(): string {
	if (process.env.CASCKPT_BIN) return process.env.CASCKPT_BIN;
	if (!built) {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "casckpt-pi-bin-"));
		process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
		const out = path.join(dir, "casckpt");
		execFileSync("go", ["build", "-o", out, "./cmd/casckpt"], { cwd: REPO, stdio: "inherit" });
		built = out;
	}
	return built;
}

/** A directory of links to every program on the system's PATH but git, and casckpt. */
export function pathWithoutGit(root: string): string {
	const bin = path.join(root, "bin");
	fs.mkdirSync(bin, { recursive: true });
	for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
		if (!fs.existsSync(dir)) continue;
		for (const name of fs.readdirSync(dir)) {
			if (name.startsWith("git") || fs.existsSync(path.join(bin, name))) continue;
			fs.symlinkSync(path.join(dir, name), path.join(bin, name));
		}
	}
	fs.symlinkSync(casckptBin(), path.join(bin, "casckpt"));
	return bin;
}

/** A fresh test world: project, pi home, store, sessions, PATH without git. */
export interface World {
	root: string;
	proj: string;
	store: string;
	env: NodeJS.ProcessEnv;
}

/** Makes a world whose pi talks to the scripted server at URL. */
export function makeWorld(url: string, extraEnv: NodeJS.ProcessEnv = {}): World {
	const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "casckpt-pi-")));
	process.on("exit", () => fs.rmSync(root, { recursive: true, force: true }));
	const proj = path.join(root, "proj");
	const agent = path.join(root, "agent");
	fs.mkdirSync(proj);
	fs.mkdirSync(agent);
	fs.mkdirSync(path.join(root, "home"));
	const models = {
		providers: {
			scripted: {
				baseUrl: url, api: "openai-completions", apiKey: "dummy",
				models: [{ id: "scripted-model", contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
			},
		},
	};
	fs.writeFileSync(path.join(agent, "models.json"), JSON.stringify(models));
	const store = path.join(root, "store");
	const env: NodeJS.ProcessEnv = {
		PATH: pathWithoutGit(root), HOME: path.join(root, "home"), PI_CODING_AGENT_DIR: agent,
		PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", CASCKPT_HOME: store, ...extraEnv,
	};
	return { root, proj, store, env };
}

/** Runs casckpt --json in the world and parses its document. */
export function cas(w: World, ...args: string[]): any {
	return JSON.parse(execFileSync(casckptBin(), [...args, "--json"], { env: w.env, encoding: "utf8" }));
}

/** The project's files (path -> text), skipping nothing but the store's temporaries. */
export function files(dir: string): Record<string, string> {
	const out: Record<string, string> = {};
	const walk = (d: string, rel: string) => {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = rel ? `${rel}/${e.name}` : e.name;
			if (e.isDirectory()) walk(path.join(d, e.name), p);
			else out[p] = fs.readFileSync(path.join(d, e.name), "utf8");
		}
	};
	walk(dir, "");
	return out;
}

/** A pi process in RPC mode. */
export class PiRpc {
	readonly proc: ChildProcessWithoutNullStreams;
	readonly records: any[] = [];
	readonly stderr: string[] = [];
	/** Answers for the extension's select dialogs, taken in order. */
	answers: string[] = [];
	/** The dialogs pi showed: title and options. */
	readonly dialogs: { title: string; options: string[] }[] = [];
	private waiters: (() => void)[] = [];
	private n = 0;

	constructor(w: World, args: string[] = []) {
		const a = [PI_BIN, "--mode", "rpc", "--model", "scripted/scripted-model", "--session-dir", path.join(w.root, "sessions"), "-e", EXTENSION, ...args];
		this.proc = spawn(process.execPath, a, { cwd: w.proj, env: w.env });
		let buf = "";
		this.proc.stdout.on("data", (d) => {
			buf += d;
			for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
				const line = buf.slice(0, i).trim();
				buf = buf.slice(i + 1);
				if (line) this.onRecord(JSON.parse(line));
			}
		});
		this.proc.stderr.on("data", (d) => this.stderr.push(String(d)));
	}

	private onRecord(r: any): void {
		this.records.push(r);
		if (r.type === "extension_ui_request" && r.method === "select") {
			this.dialogs.push({ title: r.title, options: r.options });
			const want = this.answers.shift();
			const value = r.options.find((o: string) => want !== undefined && o.startsWith(want));
			this.send(value === undefined ? { type: "extension_ui_response", id: r.id, cancelled: true } : { type: "extension_ui_response", id: r.id, value });
		}
		for (const w of this.waiters.splice(0)) w();
	}

	private send(cmd: unknown): void {
		this.proc.stdin.write(`${JSON.stringify(cmd)}\n`);
	}

	/** Waits for a record at or after FROM that matches PRED. */
	async waitFor(pred: (r: any) => boolean, from = 0, ms = 60000): Promise<any> {
		const deadline = Date.now() + ms;
		for (let i = from; ; ) {
			for (; i < this.records.length; i++) if (pred(this.records[i])) return this.records[i];
			if (this.proc.exitCode !== null) throw new Error(`pi exited ${this.proc.exitCode}: ${this.stderr.join("")}`);
			if (Date.now() > deadline) throw new Error(`timed out waiting; stderr: ${this.stderr.join("")}`);
			await new Promise<void>((r) => { this.waiters.push(r); setTimeout(r, 1000); });
		}
	}

	/** Sends CMD and returns its response. */
	async call(cmd: Record<string, unknown>): Promise<any> {
		const id = `c${++this.n}`;
		const from = this.records.length;
		this.send({ ...cmd, id });
		const r = await this.waitFor((x) => x.type === "response" && (x.id === id || (x.id === undefined && x.command === cmd.type)), from);
		if (!r.success) throw new Error(`${cmd.type}: ${r.error}`);
		return r.data;
	}

	/** Sends a prompt and waits until the agent has ended. */
	async prompt(message: string): Promise<void> {
		const from = this.records.length;
		await this.call({ type: "prompt", message });
		if (!message.startsWith("/")) await this.waitFor((x) => x.type === "agent_end", from);
	}

	/** Closes stdin and waits for pi to exit. */
	async close(): Promise<void> {
		if (this.proc.exitCode !== null) return;
		const done = new Promise((r) => this.proc.once("exit", r));
		this.proc.stdin.end();
		const t = setTimeout(() => this.proc.kill("SIGTERM"), 10000);
		await done;
		clearTimeout(t);
	}
}
