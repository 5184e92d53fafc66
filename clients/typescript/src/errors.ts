/**
 * What a casckpt command that failed throws: its exit status (1 failed or
 * refused, 2 usage error, 130 interrupted; 127 when there is no casckpt
 * binary to run) and its one line, without `casckpt: `.
 */
export class CasckptError extends Error {
  /** The command's exit status. */
  readonly exit: number;
  /** The command line it ran, without the program and `--json`. */
  readonly args: readonly string[];
  /**
   * The document the command printed before it failed (`verify` with
   * damage prints its Verify document and exits 1), else undefined.
   */
  readonly document: unknown;

  constructor(exit: number, message: string, args: readonly string[], document?: unknown) {
    super(message);
    this.name = "CasckptError";
    this.exit = exit;
    this.args = args;
    this.document = document;
  }
}

/** An answer of one command: its exit status, document and one line. */
export interface Answer {
  exit: number;
  result: unknown;
  error: string | null;
}

/**
 * The document of answer a, or a CasckptError when the command failed;
 * a document `{"error", "exit"}` is the failure's, not one to keep.
 */
export function documentOf(a: Answer, args: readonly string[]): unknown {
  if (a.exit === 0) {
    return a.result;
  }
  const r = a.result as { error?: unknown; exit?: unknown } | null;
  const isError = r !== null && typeof r === "object" && typeof r.error === "string" && typeof r.exit === "number";
  const message = isError ? (r.error as string) : (a.error ?? `casckpt exited ${a.exit}`);
  throw new CasckptError(a.exit, message, args, isError ? undefined : (a.result ?? undefined));
}
