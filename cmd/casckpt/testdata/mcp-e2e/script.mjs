// End-to-end test of `casckpt mcp` with the official TypeScript MCP SDK:
// node script.mjs CASCKPT_BINARY PROJECT_DIR (the store comes from
// CASCKPT_HOME). It spawns the binary over stdio, lists the tools, reads
// their schemas, takes a checkpoint, diffs, dry-runs and then performs a
// restore, reads a file back as text, sends malformed arguments expecting
// tool errors and a 40 MiB request expecting a JSON-RPC error (the SDK
// writes the request's id last, after the 40 MiB), the session going on. It prints
// "ok" and exits 0, or prints what failed and exits 1.
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, dir] = process.argv.slice(2);
if (!bin || !dir) {
  console.error("usage: node script.mjs CASCKPT_BINARY PROJECT_DIR");
  process.exit(2);
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return res;
}

async function ok(client, name, args) {
  const res = await call(client, name, args);
  check(!res.isError, `${name}: tool error ${JSON.stringify(res.content)}`);
  check(res.structuredContent && typeof res.structuredContent === "object", `${name}: no structured content`);
  return res.structuredContent;
}

const client = new Client({ name: "casckpt-e2e", version: "0.0.0" });
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env: process.env, stderr: "inherit" });
await client.connect(transport);
try {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  const want = ["checkpoint_create", "checkpoint_diff", "checkpoint_file_history", "checkpoint_list",
    "checkpoint_read_file", "checkpoint_restore", "checkpoint_turns", "checkpoint_undo"];
  check(JSON.stringify(names) === JSON.stringify(want), `tools ${names}`);
  for (const t of tools) {
    check(t.inputSchema.type === "object" && t.inputSchema.required.includes("dir"), `${t.name}: input schema ${JSON.stringify(t.inputSchema)}`);
    check(t.outputSchema && t.outputSchema.type === "object", `${t.name}: output schema ${JSON.stringify(t.outputSchema)}`);
    const destructive = t.name === "checkpoint_restore" || t.name === "checkpoint_undo";
    check(t.annotations?.destructiveHint === destructive, `${t.name}: annotations ${JSON.stringify(t.annotations)}`);
    if (destructive) check(t.inputSchema.properties.dry_run.default === true, `${t.name}: dry_run default`);
  }

  writeFileSync(join(dir, "a.txt"), "one\n");
  const created = await ok(client, "checkpoint_create", { dir, message: "e2e" });
  check(created.created === true && typeof created.id === "string", `create: ${JSON.stringify(created)}`);
  writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
  writeFileSync(join(dir, "new.txt"), "x\n");

  const list = await ok(client, "checkpoint_list", { dir });
  check(list.snapshots.length === 1 && list.snapshots[0].id === created.id && list.snapshots[0].reason === "e2e", `list: ${JSON.stringify(list)}`);
  const diff = await ok(client, "checkpoint_diff", { dir, snap: created.id });
  check(diff.to === "worktree" && diff.files_changed === 2 && diff.insertions === 2, `diff: ${JSON.stringify(diff)}`);

  const dry = await ok(client, "checkpoint_restore", { dir, snap: created.id });
  check(dry.dry_run === true && dry.written === 1 && dry.deleted === 1, `dry run: ${JSON.stringify(dry)}`);
  check(readFileSync(join(dir, "a.txt"), "utf8") === "one\ntwo\n", "the dry run changed a.txt");
  const real = await ok(client, "checkpoint_restore", { dir, snap: created.id, dry_run: false });
  check(real.dry_run === false && typeof real.pre_restore_id === "string", `restore: ${JSON.stringify(real)}`);
  check(readFileSync(join(dir, "a.txt"), "utf8") === "one\n", "a.txt not restored");
  check(!existsSync(join(dir, "new.txt")), "new.txt survived the restore");

  const malformed = [
    ["checkpoint_diff", { dir }],
    ["checkpoint_list", { dir: 42 }],
    ["checkpoint_restore", { dir, snap: created.id, dry_run: "no" }],
    ["checkpoint_list", { dir, bogus: true }],
    ["checkpoint_restore", { dir, snap: "ffffffff" }],
  ];
  for (const [name, args] of malformed) {
    const res = await call(client, name, args);
    check(res.isError === true, `${name} ${JSON.stringify(args)}: no tool error: ${JSON.stringify(res)}`);
  }
  const read = await call(client, "checkpoint_read_file", { dir, snap: created.id, path: "a.txt" });
  check(!read.isError && read.structuredContent.content === "one\n" && read.structuredContent.content_base64 === undefined,
    `read_file: ${JSON.stringify(read.structuredContent)}`);
  check(read.content[0].type === "text" && read.content[0].text === "one\n", `read_file text: ${JSON.stringify(read.content)}`);

  let refused = null;
  try {
    await client.callTool({ name: "checkpoint_list", arguments: { dir, pad: "x".repeat(40 << 20) } });
  } catch (err) {
    refused = err;
  }
  check(refused?.code === -32600 && /16 MiB/.test(refused.message), `a 40 MiB request: ${refused}`);
  const after = await ok(client, "checkpoint_list", { dir });
  check(after.snapshots.length === 2, `list after the restore: ${JSON.stringify(after)}`);
  console.log("ok");
} catch (err) {
  console.error(String(err?.stack ?? err));
  process.exitCode = 1;
} finally {
  await client.close();
}
