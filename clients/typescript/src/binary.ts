import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join, sep } from "node:path";

/** The platform package's name for this platform: `@casckpt/${process.platform}-${process.arch}`. */
export function platformPackage(): string {
  return `@casckpt/${process.platform}-${process.arch}`;
}

/** The binary's file name on this platform. */
const exe = process.platform === "win32" ? "casckpt.exe" : "casckpt";

/**
 * The absolute path of the casckpt binary of this platform's package (an
 * optional dependency of the release's casckpt package); throws, naming
 * the package, when it is not installed.
 */
export function binaryPath(): string {
  const pkg = platformPackage();
  try {
    return createRequire(import.meta.url).resolve(`${pkg}/bin/${exe}`);
  } catch {
    throw new Error(
      `casckpt: the package ${pkg} is not installed, so there is no casckpt binary for ${process.platform}-${process.arch}: ` +
        `npm installs it with casckpt unless optional dependencies are omitted (--omit=optional, --no-optional); ` +
        `install casckpt again without that, or set CASCKPT_BIN to a casckpt binary ` +
        `(released for linux, darwin and win32 on x64 and arm64)`,
    );
  }
}

/** Whether path is a file this process may execute. */
function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The casckpt program to run: explicit when given, else $CASCKPT_BIN,
 * else the platform package's binary when installed, else `casckpt` on
 * PATH; undefined when there is none. A name without a path separator is
 * looked up on PATH.
 */
export function findBinary(explicit?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let cand = explicit || env.CASCKPT_BIN;
  if (!cand) {
    try {
      cand = binaryPath();
    } catch {
      cand = exe;
    }
  }
  if (cand.includes(sep) || cand.includes("/")) {
    return executable(cand) ? cand : undefined;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, cand))) {
      return join(dir, cand);
    }
  }
  return undefined;
}
