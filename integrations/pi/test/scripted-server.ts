// A scripted OpenAI Chat Completions server on 127.0.0.1 for driving the
// real pi offline: the turn it serves is the number of assistant messages
// in the request (stateless, so forks replay), or N when the last message
// is a user message starting "SCRIPT:N".
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted assistant turn: text and/or tool calls. */
export interface ScriptTurn {
	text?: string;
	tools?: { tool: string; input: Record<string, unknown> }[];
}

/** A running server. */
export interface ScriptedServer {
	url: string;
	requests: unknown[];
	close: () => Promise<void>;
}

function textOf(c: unknown): string {
	if (typeof c === "string") return c;
	if (Array.isArray(c)) return c.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("");
	return "";
}

function turnIndex(body: any): number {
	const msgs: any[] = body.messages ?? [];
	let idx = msgs.filter((m) => m.role === "assistant").length;
	const last = msgs[msgs.length - 1];
	const m = last?.role === "user" ? /^\s*SCRIPT:(\d+)/.exec(textOf(last.content)) : null;
	return m ? Number(m[1]) : idx;
}

/**
 * Starts the server with SCRIPT on a free port. BEFORE, when given, runs
 * before each scripted turn is answered (a person acting while the model
 * thinks).
 */
export async function startScriptedServer(script: ScriptTurn[], before?: (turn: number) => void): Promise<ScriptedServer> {
	const requests: unknown[] = [];
	let n = 0;
	const server = http.createServer((req, res) => {
		let raw = "";
		req.on("data", (d) => (raw += d));
		req.on("end", () => {
			const body = raw ? JSON.parse(raw) : {};
			requests.push({ method: req.method, url: req.url, body });
			if (req.method !== "POST" || !req.url?.split("?")[0].endsWith("/chat/completions")) {
				res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
				return;
			}
			let turn: ScriptTurn = { text: "Scripted side answer" };
			if (body.tools?.length) {
				const idx = turnIndex(body);
				before?.(idx);
				turn = script[idx] ?? { text: "Done (script exhausted)." };
			}
			const id = `chatcmpl_${++n}`;
			const base = { id, object: "chat.completion.chunk", created: 1, model: body.model ?? "scripted-model" };
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
			const send = (d: unknown) => res.write(`data: ${typeof d === "string" ? d : JSON.stringify(d)}\n\n`);
			const chunk = (delta: unknown, finish: string | null = null) =>
				send({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
			chunk({ role: "assistant", content: "" });
			if (turn.text) chunk({ content: turn.text });
			(turn.tools ?? []).forEach((t, i) => {
				const call = { index: i, id: `call_${n}_${i}`, type: "function", function: { name: t.tool, arguments: "" } };
				chunk({ tool_calls: [call] });
				chunk({ tool_calls: [{ index: i, function: { arguments: JSON.stringify(t.input) } }] });
			});
			chunk({}, turn.tools?.length ? "tool_calls" : "stop");
			send({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
			send("[DONE]");
			res.end();
		});
	});
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	const port = (server.address() as AddressInfo).port;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
	};
}
