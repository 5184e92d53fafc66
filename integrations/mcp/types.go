package mcp

import "github.com/casckpt/casckpt"

// The inputs: a tool's arguments, the options of its command. A field
// without omitempty is required. Descriptions are the jsonschema tags.

// ListInput is checkpoint_list's arguments (casckpt list).
type ListInput struct {
	Dir     casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	N       int              `json:"n,omitempty" jsonschema:"show the newest N only (0: all)"`
	Session string           `json:"session,omitempty" jsonschema:"show only the snapshots of this agent session ID"`
}

// DiffInput is checkpoint_diff's arguments (casckpt diff).
type DiffInput struct {
	Dir   casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Snap  string           `json:"snap" jsonschema:"the checkpoint to compare from: an ID, a unique prefix of one, or @N (the Nth newest)"`
	Snap2 string           `json:"snap2,omitempty" jsonschema:"the checkpoint to compare to (default: the working tree)"`
}

// RestoreInput is checkpoint_restore's arguments (casckpt restore).
type RestoreInput struct {
	Dir           casckpt.JSONPath   `json:"dir" jsonschema:"the project directory (absolute)"`
	Snap          string             `json:"snap" jsonschema:"the checkpoint to restore: an ID, a unique prefix of one, or @N"`
	Paths         []casckpt.JSONPath `json:"paths,omitempty" jsonschema:"restore only these paths (relative to dir)"`
	DryRun        *bool              `json:"dry_run,omitempty" jsonschema:"show what would change and change nothing (default true)"`
	Safe          bool               `json:"safe,omitempty" jsonschema:"restore only what agents changed; keep and list everything else"`
	MaxFileSizeMB int64              `json:"max_file_size_mb,omitempty" jsonschema:"files larger than N MiB that the checkpoint lacks are never touched (default: the checkpoint's own limit)"`
	MaxFiles      int                `json:"max_files,omitempty" jsonschema:"refuse a tree of more than N files (default 50000)"`
}

// CreateInput is checkpoint_create's arguments (casckpt snapshot).
type CreateInput struct {
	Dir           casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Message       string           `json:"message,omitempty" jsonschema:"why the checkpoint is taken"`
	Keep          int              `json:"keep,omitempty" jsonschema:"keep at most N checkpoints of the project (default 50)"`
	MaxFileSizeMB int64            `json:"max_file_size_mb,omitempty" jsonschema:"leave out files larger than N MiB (default 10)"`
	MaxFiles      int              `json:"max_files,omitempty" jsonschema:"refuse a tree of more than N files (default 50000)"`
	MaxSizeMB     *int64           `json:"max_size_mb,omitempty" jsonschema:"keep the store under N MiB by dropping old checkpoints (0: no cap)"`
	Session       string           `json:"session,omitempty" jsonschema:"label the checkpoint with the agent's session ID"`
	Turn          string           `json:"turn,omitempty" jsonschema:"label the checkpoint with the agent's turn ID; the project's first checkpoint of a turn starts it"`
	EndTurn       bool             `json:"end_turn,omitempty" jsonschema:"end the turn named by turn on this checkpoint"`
}

// UndoInput is checkpoint_undo's arguments (casckpt undo).
type UndoInput struct {
	Dir    casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Turn   string           `json:"turn,omitempty" jsonschema:"the turn to revert (default: the newest ended turn not yet undone)"`
	DryRun *bool            `json:"dry_run,omitempty" jsonschema:"show what would change and change nothing (default true)"`
	Redo   bool             `json:"redo,omitempty" jsonschema:"re-apply the newest undo instead (give no turn)"`
}

// TurnsInput is checkpoint_turns' arguments (casckpt turns).
type TurnsInput struct {
	Dir     casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Session string           `json:"session,omitempty" jsonschema:"show only the turns of this agent session ID"`
}

// FileHistoryInput is checkpoint_file_history's arguments (casckpt log).
type FileHistoryInput struct {
	Dir  casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Path casckpt.JSONPath `json:"path" jsonschema:"the file, link or directory, relative to dir or absolute inside it"`
}

// ReadFileInput is checkpoint_read_file's arguments (casckpt cat).
type ReadFileInput struct {
	Dir  casckpt.JSONPath `json:"dir" jsonschema:"the project directory (absolute)"`
	Snap string           `json:"snap" jsonschema:"the checkpoint: an ID, a unique prefix of one, or @N"`
	Path casckpt.JSONPath `json:"path" jsonschema:"the file's path relative to dir"`
}

// The outputs: the documents of docs/commands.md, field for field.

// ListOutput is checkpoint_list's result: list's array, wrapped.
type ListOutput struct {
	Snapshots []ListItem `json:"snapshots"`
}

// ListItem is one element of list's document.
type ListItem struct {
	ID           string  `json:"id"`
	ShortID      string  `json:"short_id"`
	Time         string  `json:"time"`
	Reason       string  `json:"reason"`
	FilesChanged int64   `json:"files_changed"`
	Insertions   int64   `json:"insertions"`
	Deletions    int64   `json:"deletions"`
	Pinned       bool    `json:"pinned"`
	Session      *string `json:"session"`
	Turn         *string `json:"turn"`
	Title        *string `json:"title"`
	Damaged      bool    `json:"damaged,omitempty"`
	// Machine is, on a bucket store, the machine whose project it is.
	Machine *string `json:"machine,omitempty"`
}

// DiffOutput is diff's document.
type DiffOutput struct {
	From         string     `json:"from"`
	To           string     `json:"to"`
	Files        []DiffFile `json:"files"`
	FilesChanged int64      `json:"files_changed"`
	Insertions   int64      `json:"insertions"`
	Deletions    int64      `json:"deletions"`
}

// DiffFile is one changed path of diff's document.
type DiffFile struct {
	Path       casckpt.JSONPath `json:"path"`
	Status     string           `json:"status"`
	Insertions int64            `json:"insertions"`
	Deletions  int64            `json:"deletions"`
	Binary     bool             `json:"binary"`
}

// RestoreOutput is restore's document.
type RestoreOutput struct {
	RestoredTo   string             `json:"restored_to"`
	PreRestoreID *string            `json:"pre_restore_id"`
	Written      int                `json:"written"`
	Deleted      int                `json:"deleted"`
	DryRun       bool               `json:"dry_run"`
	Changes      []RestoreChange    `json:"changes"`
	Skipped      []casckpt.JSONPath `json:"skipped"`
	Safe         *bool              `json:"safe,omitempty"`
	Kept         *[]PathReason      `json:"kept,omitempty"`
}

// RestoreChange is a file or link restore writes or deletes.
type RestoreChange struct {
	Path   casckpt.JSONPath `json:"path"`
	Action string           `json:"action"`
}

// PathReason is a path left alone and why.
type PathReason struct {
	Path   casckpt.JSONPath `json:"path"`
	Reason string           `json:"reason"`
}

// CreateOutput is snapshot's document.
type CreateOutput struct {
	Created bool             `json:"created"`
	ID      *string          `json:"id"`
	Project casckpt.JSONPath `json:"project"`
	Files   int64            `json:"files"`
	Bytes   int64            `json:"bytes"`
	Session *string          `json:"session"`
	Turn    *string          `json:"turn"`
	// ExcludedByDefault counts the paths the default exclude list left
	// out; Unreadable names those that could not be read (not captured).
	ExcludedByDefault int64              `json:"excluded_by_default"`
	Unreadable        []casckpt.JSONPath `json:"unreadable"`
}

// UndoOutput is undo's document.
type UndoOutput struct {
	Turn      string             `json:"turn"`
	PreUndoID *string            `json:"pre_undo_id"`
	Reverted  []casckpt.JSONPath `json:"reverted"`
	Merged    []casckpt.JSONPath `json:"merged"`
	Conflicts []PathReason       `json:"conflicts"`
	DryRun    bool               `json:"dry_run"`
}

// TurnsOutput is checkpoint_turns' result: turns' array, wrapped.
type TurnsOutput struct {
	Turns []Turn `json:"turns"`
}

// Turn is one element of turns' document.
type Turn struct {
	Turn         string   `json:"turn"`
	Session      *string  `json:"session"`
	Start        string   `json:"start"`
	End          *string  `json:"end"`
	Started      string   `json:"started"`
	Ended        *string  `json:"ended"`
	FilesChanged int64    `json:"files_changed"`
	Insertions   int64    `json:"insertions"`
	Deletions    int64    `json:"deletions"`
	Dropped      []string `json:"dropped"`
	Damaged      bool     `json:"damaged,omitempty"`
	Title        *string  `json:"title"`
	Interrupted  bool     `json:"interrupted"`
	UndoneBy     *string  `json:"undone_by"`
	Machine      *string  `json:"machine,omitempty"` // as in ListItem
}

// FileHistoryOutput is checkpoint_file_history's result: log's array,
// wrapped.
type FileHistoryOutput struct {
	History []HistoryItem `json:"history"`
}

// HistoryItem is one element of log's document.
type HistoryItem struct {
	ID         string  `json:"id"`
	ShortID    string  `json:"short_id"`
	Time       string  `json:"time"`
	Reason     string  `json:"reason"`
	Status     string  `json:"status"`
	Insertions int64   `json:"insertions"`
	Deletions  int64   `json:"deletions"`
	Turn       *string `json:"turn"`
	Session    *string `json:"session"`
}

// ReadFileOutput is cat's document: the file as text when it is UTF-8
// text, else its bytes in base64.
type ReadFileOutput struct {
	Path          casckpt.JSONPath `json:"path"`
	Content       *string          `json:"content,omitempty"`
	ContentBase64 *string          `json:"content_base64,omitempty"`
}

// text is the file's text, and whether it is text: the tool's text content,
// so that a model reads the file as it is rather than as JSON.
func (o ReadFileOutput) text() (string, bool) {
	if o.Content == nil {
		return "", false
	}
	return *o.Content, true
}
