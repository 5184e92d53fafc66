// The extension's settings, read once from the environment.

/** What a fork or tree jump does to files when pi has no UI to ask. */
export type Choice = "all" | "conversation" | "files" | "cancel";

/** The extension's settings. */
export interface Config {
	/** The choice taken without a UI (print and JSON modes). */
	noUiChoice: Choice;
	/** Whether a restore without a UI keeps a person's own edits. */
	noUiSafe: boolean;
	/** The casckpt store; casckpt's default (CASCKPT_HOME, ...) when unset. */
	store?: string;
	/** Snapshots kept per project (`snapshot --keep`): two or three a turn. */
	keep: number;
	/** Patterns every checkpoint leaves out on top of casckpt's defaults (`snapshot --exclude`). */
	exclude: string[];
	/** Untracked directories of this many files or more are left out (`snapshot --max-dir-files`; 0: none). */
	maxDirFiles: number;
}

const CHOICES: Choice[] = ["all", "conversation", "files", "cancel"];

/** pi's checkpoint extension leaves out `.tox` and directories of 200 untracked files or more. */
const DEFAULT_EXCLUDE = [".tox/"];
const DEFAULT_MAX_DIR_FILES = 200;

/**
 * Reads CASCKPT_PI_NO_UI, CASCKPT_PI_SAFE, CASCKPT_PI_STORE, CASCKPT_PI_KEEP,
 * CASCKPT_PI_EXCLUDE (comma-separated patterns; empty: none) and
 * CASCKPT_PI_MAX_DIR_FILES (0: off).
 */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
	const c = env.CASCKPT_PI_NO_UI as Choice | undefined;
	const exclude = env.CASCKPT_PI_EXCLUDE;
	return {
		noUiChoice: c && CHOICES.includes(c) ? c : "conversation",
		noUiSafe: env.CASCKPT_PI_SAFE !== "0",
		store: env.CASCKPT_PI_STORE || undefined,
		keep: /^[1-9][0-9]{0,5}$/.test(env.CASCKPT_PI_KEEP ?? "") ? Number(env.CASCKPT_PI_KEEP) : 200,
		exclude: exclude === undefined ? DEFAULT_EXCLUDE : exclude.split(",").map((p) => p.trim()).filter((p) => p !== "" && !p.startsWith("!") && !p.startsWith("#")),
		maxDirFiles: /^[0-9]{1,6}$/.test(env.CASCKPT_PI_MAX_DIR_FILES ?? "") ? Number(env.CASCKPT_PI_MAX_DIR_FILES) : DEFAULT_MAX_DIR_FILES,
	};
}
