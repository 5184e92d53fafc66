// BenchmarkClientW3's driver for the TypeScript client (see bench/clients_test.go).
//
//     node client_w3.mjs resident|process STORE
//
// One Casckpt client (resident: through one casckpt serve; process: a process per call) on
// STORE, from clients/typescript/dist (npm ci there builds it). Each line on stdin,
// {"dir", "reason", "keep"}, is one W3 turn: its checkpoint, as a host takes it. Each is
// answered with one line, {"ok", "error", "cpu_s"}: cpu_s is the CPU seconds this process,
// the casckpt processes it waited for and the resident server have used so far.

import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Casckpt } from "../../clients/typescript/dist/index.js";

const [mode, store] = process.argv.slice(2);
const ticks = 100; // USER_HZ: the unit of /proc's CPU times on Linux

/** Fields of /proc/PID/stat after the command name: [11] utime, [12] stime, [13] cutime, [14] cstime. */
function stat(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(")").at(-1).trim().split(" ").map(Number);
  } catch {
    return undefined;
  }
}

/** CPU seconds of this process, its waited-for children and the resident server. */
function cpu(client) {
  const self = stat("self");
  const server = client.pid === undefined ? undefined : stat(client.pid);
  const own = self[11] + self[12] + self[13] + self[14];
  return (own + (server ? server[11] + server[12] : 0)) / ticks;
}

const client = new Casckpt({ store, resident: mode === "resident" });
for await (const line of createInterface({ input: process.stdin })) {
  const turn = JSON.parse(line);
  let answer;
  try {
    const s = await client.snapshot(turn.dir, { message: turn.reason, keep: turn.keep });
    answer = { ok: s.created, error: s.created ? "" : "no snapshot taken" };
  } catch (e) {
    answer = { ok: false, error: String(e) };
  }
  process.stdout.write(JSON.stringify({ ...answer, cpu_s: cpu(client) }) + "\n");
}
await client.close();
