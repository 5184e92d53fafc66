#!/usr/bin/env node
// The casckpt command of the npm package casckpt (its "bin", which the
// release adds): runs this platform's casckpt binary, the one its
// platform package carries (binaryPath), with these arguments and stdio,
// and exits as it exits.

import { spawnSync } from "node:child_process";
import { binaryPath } from "./binary.js";

let bin: string;
try {
  bin = binaryPath();
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
const res = spawnSync(bin, process.argv.slice(2), { stdio: "inherit" });
if (res.error) {
  console.error(`casckpt: ${bin}: ${res.error.message}`);
  process.exit(1);
}
if (res.signal) {
  process.kill(process.pid, res.signal);
}
process.exit(res.status ?? 1);
