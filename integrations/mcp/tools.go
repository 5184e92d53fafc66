package mcp

import (
	"reflect"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool describes one tool: its name, the casckpt command it runs, what it
// does and its annotations, and the Go type of its arguments (an Input
// struct). Each field of Input says, in its cli tag, which argument of
// the command it is: a flag ("--session", "-n"), a positional argument as
// the command's usage line names it ("DIR", "SNAP", "PATH..."), or "-" for
// an option of the tool alone.
type Tool struct {
	Name, Command, Description string
	Annotations                *sdk.ToolAnnotations
	Input                      reflect.Type
}

// Tools lists the tools, in the order the server adds them. The server's
// input schemas are derived from their Input types.
func Tools() []Tool {
	yes, no := true, false
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no, OpenWorldHint: &no}
	writes := &sdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}
	destructive := &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}
	return []Tool{
		{"checkpoint_list", "list", "List the checkpoints (snapshots) of the project at dir, newest first (casckpt list --json, as {\"snapshots\": [...]}).",
			readOnly, reflect.TypeFor[ListInput]()},
		{"checkpoint_diff", "diff", "What changed from checkpoint snap to snap2, or to the working tree when snap2 is empty (casckpt diff --patch --json): the changed files and their unified diffs (of the files in paths, when given), at most max_patch_bytes of them; patch_truncated says they were cut. The text content is the patches.",
			readOnly, reflect.TypeFor[DiffInput]()},
		{"checkpoint_restore", "restore", "Make the working tree at dir (or paths in it) equal to checkpoint snap (casckpt restore --json). A dry run unless dry_run is false; a real restore first checkpoints the current tree.",
			destructive, reflect.TypeFor[RestoreInput]()},
		{"checkpoint_create", "snapshot", "Checkpoint the working tree at dir unless it is unchanged (casckpt snapshot --json); drops old checkpoints as snapshot's keep rule and size cap do.",
			writes, reflect.TypeFor[CreateInput]()},
		{"checkpoint_undo", "undo", "Revert the changes of one turn (default: the newest ended turn), keeping everything done since (casckpt undo --json). A dry run unless dry_run is false.",
			destructive, reflect.TypeFor[UndoInput]()},
		{"checkpoint_turns", "turns", "List the agent turns of the project at dir, newest first (casckpt turns --json, as {\"turns\": [...]}).",
			readOnly, reflect.TypeFor[TurnsInput]()},
		{"checkpoint_file_history", "log", "The checkpoints in which path changed, newest first (casckpt log --json, as {\"history\": [...]}).",
			readOnly, reflect.TypeFor[FileHistoryInput]()},
		{"checkpoint_read_file", "cat", "One file as checkpoint snap holds it (casckpt cat --json): UTF-8 text as content (and as the result's text), other bytes as content_base64.",
			readOnly, reflect.TypeFor[ReadFileInput]()},
		{"checkpoint_ls", "ls", "Every file, link and directory checkpoint snap holds (casckpt ls --json, as {\"entries\": [...]}).",
			readOnly, reflect.TypeFor[LsInput]()},
		{"checkpoint_pin", "pin", "Keep checkpoint snap through every automatic rule (keep, size cap, prune) (casckpt pin --json).",
			writes, reflect.TypeFor[PinInput]()},
		{"checkpoint_record_write", "record-write", "Record that the agent has just written paths: what they hold now is the agent's, so that a safe restore puts them back while they are still so (casckpt record-write --json).",
			writes, reflect.TypeFor[RecordWriteInput]()},
	}
}
