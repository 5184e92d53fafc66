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
}

const CHOICES: Choice[] = ["all", "conversation", "files", "cancel"];

/** Reads CASCKPT_PI_NO_UI, CASCKPT_PI_SAFE, CASCKPT_PI_STORE and CASCKPT_PI_KEEP. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
	const c = env.CASCKPT_PI_NO_UI as Choice | undefined;
	return {
		noUiChoice: c && CHOICES.includes(c) ? c : "conversation",
		noUiSafe: env.CASCKPT_PI_SAFE !== "0",
		store: env.CASCKPT_PI_STORE || undefined,
		keep: /^[1-9][0-9]{0,5}$/.test(env.CASCKPT_PI_KEEP ?? "") ? Number(env.CASCKPT_PI_KEEP) : 200,
	};
}
