package mcp

import (
	"fmt"
	"strings"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// The inputs: a tool's arguments, the options of its command. A field
// without omitempty is required. Descriptions are the jsonschema tags.
// The cli tags say which argument of the command each field is (see
// Tool): a flag, a positional argument, or "-" for the tool's own.

// ListInput is checkpoint_list's arguments (casckpt list).
type ListInput struct {
	Dir     jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	N       int          `json:"n,omitempty" cli:"-n" jsonschema:"show the newest N only (0: all)"`
	Session string       `json:"session,omitempty" cli:"--session" jsonschema:"show only the snapshots of the agent's session ID"`
}

// DiffInput is checkpoint_diff's arguments (casckpt diff --patch).
type DiffInput struct {
	Dir           jsonapi.Path   `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Snap          string         `json:"snap" cli:"SNAP" jsonschema:"the checkpoint to compare from: an ID, a unique prefix of one, @N (the N-th newest) or #N (its stable number)"`
	Snap2         string         `json:"snap2,omitempty" cli:"SNAP2" jsonschema:"the checkpoint to compare to (default: the working tree)"`
	Paths         []jsonapi.Path `json:"paths,omitempty" cli:"-" jsonschema:"give the patch of these files only (relative to dir; a directory selects the files below it); files still lists every change"`
	MaxPatchBytes int            `json:"max_patch_bytes,omitempty" cli:"-" jsonschema:"cut the patches at N bytes in all, at a line end, and set patch_truncated (default 65536)"`
}

// RestoreInput is checkpoint_restore's arguments (casckpt restore).
type RestoreInput struct {
	Dir           jsonapi.Path   `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Snap          string         `json:"snap" cli:"SNAP" jsonschema:"the checkpoint to restore: an ID, a unique prefix of one, @N (the N-th newest) or #N (its stable number)"`
	Paths         []jsonapi.Path `json:"paths,omitempty" cli:"PATH..." jsonschema:"restore only these paths (relative to dir)"`
	DryRun        *bool          `json:"dry_run,omitempty" cli:"--dry-run" jsonschema:"show what would change and change nothing (default true)"`
	Safe          bool           `json:"safe,omitempty" cli:"--safe" jsonschema:"restore only what agents changed; keep and list everything else"`
	MaxFileSizeMB int64          `json:"max_file_size_mb,omitempty" cli:"--max-file-size-mb" jsonschema:"files larger than N MiB that SNAP lacks are excluded, so never touched (default: the snapshot's own limit)"`
	MaxFiles      int            `json:"max_files,omitempty" cli:"--max-files" jsonschema:"refuse a tree of more than N files (default 50000)"`
	Fallback      bool           `json:"fallback,omitempty" cli:"--fallback" jsonschema:"if SNAP's data is damaged, restore the newest older snapshot that is intact"`
}

// CreateInput is checkpoint_create's arguments (casckpt snapshot).
type CreateInput struct {
	Dir           jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Message       string       `json:"message,omitempty" cli:"-m" jsonschema:"why the snapshot is taken"`
	Keep          int          `json:"keep,omitempty" cli:"--keep" jsonschema:"keep at most N snapshots of the project (older unpinned ones are dropped) (default 20)"`
	MaxFileSizeMB int64        `json:"max_file_size_mb,omitempty" cli:"--max-file-size-mb" jsonschema:"leave out files larger than N MiB (default 10)"`
	MaxFiles      int          `json:"max_files,omitempty" cli:"--max-files" jsonschema:"refuse a tree of more than N files (default 50000)"`
	Exclude       []string     `json:"exclude,omitempty" cli:"--exclude" jsonschema:"also leave out paths matching this gitignore PATTERN, as the default list (repeatable; recorded with the snapshot, whose restore leaves them alone)"`
	MaxDirFiles   int          `json:"max_dir_files,omitempty" cli:"--max-dir-files" jsonschema:"leave out whole each directory of N files or more none of which git tracks (0: off; recorded with the snapshot)"`
	MaxSizeMB     *int64       `json:"max_size_mb,omitempty" cli:"--max-size-mb" jsonschema:"keep the store under N MiB by dropping old snapshots (0: no cap; default 500 on a local store, none on an s3:// one) (default 500)"`
	Session       string       `json:"session,omitempty" cli:"--session" jsonschema:"label the snapshot with the agent's session ID"`
	Turn          string       `json:"turn,omitempty" cli:"--turn" jsonschema:"label the snapshot with the agent's turn ID; the project's first snapshot of a turn starts it"`
	EndTurn       bool         `json:"end_turn,omitempty" cli:"--end-turn" jsonschema:"end the turn of --turn on this snapshot"`
}

// UndoInput is checkpoint_undo's arguments (casckpt undo).
type UndoInput struct {
	Dir    jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Turn   string       `json:"turn,omitempty" cli:"TURN" jsonschema:"the turn to revert (default: the newest ended turn not yet undone)"`
	DryRun *bool        `json:"dry_run,omitempty" cli:"--dry-run" jsonschema:"show what would change and change nothing (default true)"`
	Redo   bool         `json:"redo,omitempty" cli:"--redo" jsonschema:"re-apply the newest undo instead (give no turn)"`
}

// TurnsInput is checkpoint_turns' arguments (casckpt turns).
type TurnsInput struct {
	Dir     jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Session string       `json:"session,omitempty" cli:"--session" jsonschema:"show only the turns of the agent's session ID"`
}

// FileHistoryInput is checkpoint_file_history's arguments (casckpt log).
type FileHistoryInput struct {
	Dir  jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Path jsonapi.Path `json:"path" cli:"PATH" jsonschema:"the file, link or directory, relative to dir or absolute inside it"`
}

// ReadFileInput is checkpoint_read_file's arguments (casckpt cat).
type ReadFileInput struct {
	Dir      jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Snap     string       `json:"snap" cli:"SNAP" jsonschema:"the checkpoint: an ID, a unique prefix of one, @N (the N-th newest) or #N (its stable number)"`
	Path     jsonapi.Path `json:"path" cli:"PATH" jsonschema:"the file's path relative to dir"`
	Fallback bool         `json:"fallback,omitempty" cli:"--fallback" jsonschema:"if SNAP's copy is damaged (or fails --check), use the newest older snapshot's intact copy"`
	Check    string       `json:"check,omitempty" cli:"--check" jsonschema:"with --fallback: also pass over a copy that is not valid \"json\""`
}

// LsInput is checkpoint_ls' arguments (casckpt ls).
type LsInput struct {
	Dir  jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Snap string       `json:"snap" cli:"SNAP" jsonschema:"the checkpoint: an ID, a unique prefix of one, @N (the N-th newest) or #N (its stable number)"`
}

// PinInput is checkpoint_pin's arguments (casckpt pin).
type PinInput struct {
	Dir  jsonapi.Path `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Snap string       `json:"snap" cli:"SNAP" jsonschema:"the checkpoint to keep through every automatic rule: an ID, a unique prefix of one, @N (the N-th newest) or #N (its stable number)"`
}

// RecordWriteInput is checkpoint_record_write's arguments (casckpt
// record-write).
type RecordWriteInput struct {
	Dir   jsonapi.Path   `json:"dir" cli:"DIR" jsonschema:"the project directory (absolute)"`
	Paths []jsonapi.Path `json:"paths" cli:"PATH..." jsonschema:"the paths the agent has just written (relative to dir or absolute inside it); a missing path records a deletion"`
}

// The outputs: the documents of package jsonapi, embedded (so that the
// output schemas are derived from them), each with the store it comes
// from (Origin).

// Origin names the store a result comes from, so that a client whose
// server runs with another environment than it expects sees which store
// it reads (an empty list from the wrong store is not an empty project).
type Origin struct {
	Store string `json:"store" jsonschema:"the store the tool used: a directory or an s3:// URL"`
}

func (o *Origin) setStore(s string) { o.Store = s }

// ListOutput is checkpoint_list's result: list's array, wrapped.
type ListOutput struct {
	Snapshots []jsonapi.ListItem `json:"snapshots"`
	Origin
}

// DiffOutput is diff --patch's document, its patches bounded: only the
// selected files have a patch, and PatchTruncated says the patches were
// cut short.
type DiffOutput struct {
	jsonapi.Diff
	PatchTruncated bool `json:"patch_truncated"`
	Origin
}

// text is the result's text for a model: a line per changed file, then
// the patches it has, then a line when they were cut short.
func (o DiffOutput) text() (string, bool) {
	var b strings.Builder
	for _, f := range o.Files {
		fmt.Fprintf(&b, "%s %s (+%d -%d)\n", f.Status, casckpt.QuotePath(string(f.Path)), f.Insertions, f.Deletions)
	}
	if len(o.Files) == 0 {
		fmt.Fprintf(&b, "no changes from %s to %s\n", o.From, o.To)
	}
	sep := "\n"
	for _, f := range o.Files {
		if f.Patch != nil {
			b.WriteString(sep + *f.Patch)
			sep = ""
		}
	}
	if o.PatchTruncated {
		b.WriteString("\n[the patches were cut short: select files with paths, or raise max_patch_bytes]\n")
	}
	return b.String(), true
}

// RestoreOutput is restore's document.
type RestoreOutput struct {
	jsonapi.Restore
	Origin
}

// CreateOutput is snapshot's document.
type CreateOutput struct {
	jsonapi.Snapshot
	Origin
}

// UndoOutput is undo's document.
type UndoOutput struct {
	jsonapi.Undo
	Origin
}

// TurnsOutput is checkpoint_turns' result: turns' array, wrapped.
type TurnsOutput struct {
	Turns []jsonapi.Turn `json:"turns"`
	Origin
}

// FileHistoryOutput is checkpoint_file_history's result: log's array,
// wrapped.
type FileHistoryOutput struct {
	History []jsonapi.LogItem `json:"history"`
	Origin
}

// ReadFileOutput is cat's document: the file as text when it is UTF-8
// text, else its bytes in base64.
type ReadFileOutput struct {
	jsonapi.Cat
	Origin
}

// text is the file's text, and whether it is text: the tool's text content,
// so that a model reads the file as it is rather than as JSON.
func (o ReadFileOutput) text() (string, bool) {
	if o.Content == nil {
		return "", false
	}
	return *o.Content, true
}

// LsOutput is checkpoint_ls' result: ls' array, wrapped.
type LsOutput struct {
	Entries []jsonapi.LsItem `json:"entries"`
	Origin
}

// PinOutput is pin's document.
type PinOutput struct {
	jsonapi.Pin
	Origin
}

// RecordWriteOutput is record-write's document.
type RecordWriteOutput struct {
	jsonapi.RecordWrite
	Origin
}
