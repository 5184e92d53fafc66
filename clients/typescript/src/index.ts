// casckpt for Node: every casckpt command as an async function with typed
// options and the typed document `casckpt --json` prints (generated from
// Go package jsonapi), over a process per call or one resident
// `casckpt serve`; failures throw CasckptError.

export * from "./documents.js";
export { CasckptError } from "./errors.js";
export { Casckpt, type ClientOptions } from "./client.js";
export * from "./functions.js";
export type * from "./options.js";
export { binaryPath, findBinary, platformPackage } from "./binary.js";
