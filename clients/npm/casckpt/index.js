"use strict";
// The casckpt binary for this platform: the one its platform package
// (@casckpt/<platform>-<arch>, an optional dependency that npm installs only
// where os and cpu match) carries.

/** The platform package's name for this process's platform and architecture. */
function platformPackage() {
  return `@casckpt/${process.platform}-${process.arch}`;
}

/**
 * The absolute path of the casckpt binary; throws, naming the package, when
 * this platform's package is not installed.
 */
function binaryPath() {
  const exe = process.platform === "win32" ? "casckpt.exe" : "casckpt";
  const pkg = platformPackage();
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (e) {
    throw new Error(
      `casckpt: the package ${pkg} is not installed, so there is no casckpt binary for ` +
        `${process.platform}-${process.arch} (installed with --no-optional or --omit=optional? ` +
        `supported: linux, darwin and win32 on x64 and arm64)`,
    );
  }
}

module.exports = { binaryPath, platformPackage };
