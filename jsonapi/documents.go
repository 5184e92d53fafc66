package jsonapi

// The documents, one type each, as docs/commands.md describes them. A
// pointer field is null when unset (or, with omitempty, left out); a slice
// field is never nil where the document promises [] (the command makes it
// so). Field order is the order of the document's keys. The documents the
// command once printed from a map keep their keys sorted.

// Error is what --json prints for a command that failed or was refused
// (exit 1), misused (exit 2) or interrupted (130).
type Error struct {
	Error string `json:"error"`
	Exit  int    `json:"exit"`
}

// Snapshot is snapshot's document.
type Snapshot struct {
	Created bool    `json:"created"`
	ID      *string `json:"id"`
	Project Path    `json:"project"`
	Files   int64   `json:"files"`
	Bytes   int64   `json:"bytes"`
	Session *string `json:"session"`
	Turn    *string `json:"turn"`
	// ExcludedByDefault counts the paths the default exclude list left
	// out; Unreadable names those that could not be read (not captured).
	ExcludedByDefault int64  `json:"excluded_by_default"`
	Unreadable        []Path `json:"unreadable"`
}

// List is list's document.
type List []ListItem

// ListItem is one element of list's document.
type ListItem struct {
	ID           string  `json:"id"`
	Number       uint64  `json:"number"` // the snapshot's stable #N in its project
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
	// Machine is, on a bucket store, the machine whose project it is
	// (left out for a store in a directory).
	Machine *string `json:"machine,omitempty"`
	// Bytes is the tree's size (its files' sizes summed); AddedBytes what
	// the snapshot added to the store when taken (the packs it wrote,
	// compressed) and AddedRawBytes their plain size: 0 when unknown.
	Bytes         int64 `json:"bytes"`
	AddedBytes    int64 `json:"added_bytes"`
	AddedRawBytes int64 `json:"added_raw_bytes"`
}

// Turns is turns' document.
type Turns []Turn

// Turn is one element of turns' document. Dropped names the
// turn's snapshots that were dropped ("start", "end"): such a turn can no
// longer be undone.
type Turn struct {
	Turn         string   `json:"turn"`
	Session      *string  `json:"session"`
	Start        string   `json:"start"`
	End          *string  `json:"end"`
	StartNumber  *uint64  `json:"start_number"` // the start's #N; null when dropped
	EndNumber    *uint64  `json:"end_number"`   // the end's #N; null when dropped or open
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

// Diff is diff's document.
type Diff struct {
	From         string     `json:"from"`
	To           string     `json:"to"`
	Files        []DiffFile `json:"files"`
	FilesChanged int64      `json:"files_changed"`
	Insertions   int64      `json:"insertions"`
	Deletions    int64      `json:"deletions"`
}

// DiffFile is one changed path of diff's document.
type DiffFile struct {
	Path       Path   `json:"path"`
	Status     string `json:"status"`
	Insertions int64  `json:"insertions"`
	Deletions  int64  `json:"deletions"`
	Binary     bool   `json:"binary"`
	// Patch is the file's unified diff (diff --json --patch).
	Patch *string `json:"patch,omitempty"`
	// JSONChanges are, for a modified file whose two versions are JSON
	// documents, the values that differ (left out for any other file).
	JSONChanges *[]JSONChange `json:"json_changes,omitempty"`
}

// JSONChange is one value that differs between two versions of a JSON
// document: its JSONPath ("$.a.b[3]", `$["a b"]`), its op ("added",
// "removed" or "changed"), and the old and the new value (From left out
// when added, To when removed; either may be JSON null).
type JSONChange struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	From any    `json:"from,omitempty"`
	To   any    `json:"to,omitempty"`
}

// Restore is restore's document, with the changes listed.
type Restore struct {
	RestoredTo   string  `json:"restored_to"`
	PreRestoreID *string `json:"pre_restore_id"`
	Written      int     `json:"written"`
	Deleted      int     `json:"deleted"`
	DryRun       bool    `json:"dry_run"`
	// Changes are the files and links written or deleted (or, in a dry
	// run, to be), one per written or deleted count.
	Changes []RestoreChange `json:"changes"`
	// Skipped are the paths left alone because an excluded entry is in
	// the way, or because they changed during the restore.
	Skipped []Path `json:"skipped"`
	// Tried is given with --fallback: the snapshots passed over, newest
	// first, before restored_to ([] when it restored SNAP itself).
	Tried *[]TriedSnapshot `json:"tried,omitempty"`
	// Safe and Kept are given with --safe: whether only agents' changes
	// were restored, and the paths kept.
	Safe *bool         `json:"safe,omitempty"`
	Kept *[]PathReason `json:"kept,omitempty"`
}

// RestoreChange is a file or link restore writes or deletes.
type RestoreChange struct {
	Path   Path   `json:"path"`
	Action string `json:"action"` // "write" or "delete"
}

// PathReason is a path left alone and why.
type PathReason struct {
	Path   Path   `json:"path"`
	Reason string `json:"reason"`
}

// RecordWrite is record-write's document.
type RecordWrite struct {
	Recorded int `json:"recorded"`
}

// Undo is undo's (and redo's) document.
type Undo struct {
	Turn      string       `json:"turn"`
	PreUndoID *string      `json:"pre_undo_id"`
	Reverted  []Path       `json:"reverted"`
	Merged    []Path       `json:"merged"`
	Conflicts []PathReason `json:"conflicts"`
	DryRun    bool         `json:"dry_run"`
}

// TriedSnapshot is a snapshot a fallback passed over (cat or restore
// --fallback), and why.
type TriedSnapshot struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Cat is cat's document: the snapshot read, the bytes as text when they
// are UTF-8 text, else in base64 (exactly one of the two is set).
type Cat struct {
	Path Path `json:"path"`
	// ID is the full ID of the snapshot the bytes are from: SNAP, or with
	// --fallback the one used.
	ID string `json:"id"`
	// Tried are the snapshots cat --fallback passed over, newest first
	// ([] when it read SNAP itself).
	Tried         []TriedSnapshot `json:"tried"`
	Content       *string         `json:"content,omitempty"`
	ContentBase64 *string         `json:"content_base64,omitempty"`
}

// Ls is ls' document.
type Ls []LsItem

// LsItem is one element of ls' document: a file, link or directory.
type LsItem struct {
	Path Path   `json:"path"`
	Type string `json:"type"`
	Size int64  `json:"size"`
	// Mode is the permission bits as a number (420 is 0644, 493 is 0755).
	Mode uint32 `json:"mode"`
}

// Log is log's document.
type Log []LogItem

// LogItem is one element of log's document.
type LogItem struct {
	ID         string  `json:"id"`
	Number     uint64  `json:"number"` // the snapshot's stable #N in its project
	ShortID    string  `json:"short_id"`
	Time       string  `json:"time"`
	Reason     string  `json:"reason"`
	Status     string  `json:"status"`
	Insertions int64   `json:"insertions"`
	Deletions  int64   `json:"deletions"`
	Turn       *string `json:"turn"`
	Session    *string `json:"session"`
}

// Pin is pin's document.
type Pin struct {
	Pinned string `json:"pinned"`
}

// Unpin is unpin's document.
type Unpin struct {
	Unpinned string `json:"unpinned"`
}

// Forget is forget's document.
type Forget struct {
	Forgotten []string `json:"forgotten"`
	DryRun    bool     `json:"dry_run"` // nothing was forgotten: what would be
	// Snapshots describes each forgotten snapshot, in the order named.
	Snapshots []Forgotten `json:"snapshots"`
	// FreesBytes is, in a dry run, the stored size of the objects no
	// snapshot reaches once these are forgotten (what a later gc frees of
	// theirs); null without --dry-run (it marks the whole store).
	FreesBytes *int64 `json:"frees_bytes"`
}

// Forgotten is one element of forget's snapshots: a pinned snapshot is
// forgotten like any other. AloneBytes is, in a dry run, the stored size
// of the objects no other snapshot of the store reaches; else null.
type Forgotten struct {
	ID         string  `json:"id"`
	Number     uint64  `json:"number"`
	Time       string  `json:"time"`
	Reason     string  `json:"reason"`
	Pinned     bool    `json:"pinned"`
	Session    *string `json:"session"`
	Turn       *string `json:"turn"`
	AloneBytes *int64  `json:"alone_bytes"`
}

// Status is status' document.
type Status struct {
	DamagedObjects []ObjectReason `json:"damaged_objects"`
	// Home is the user's home directory, symbolic links resolved, for a
	// page to show paths under it as ~/...; null when unknown.
	Home       *Path     `json:"home"`
	HookMisses []string  `json:"hook_misses"`
	Legacy     []Legacy  `json:"legacy"`
	Projects   []Project `json:"projects"`
	SizeBytes  int64     `json:"size_bytes"`
	Store      Path      `json:"store"`
}

// Project is one project of status' document.
type Project struct {
	Workdir   Path    `json:"workdir"`
	Machine   *string `json:"machine,omitempty"` // left out for a store in a directory
	Snapshots int     `json:"snapshots"`
	CreatedAt string  `json:"created_at"`
	LastTouch string  `json:"last_touch"`
	State     string  `json:"state"`
	Lifecycle *string `json:"lifecycle"` // running, completed, failed or null
	Test      bool    `json:"test"`
	// Bytes is the newest snapshot's tree size; StoredBytes and
	// StoredRawBytes sum the project's snapshots' added_bytes and
	// added_raw_bytes (see docs/commands.md).
	Bytes          int64 `json:"bytes"`
	StoredBytes    int64 `json:"stored_bytes"`
	StoredRawBytes int64 `json:"stored_raw_bytes"`
}

// Legacy is a legacy Hermes store, or another agent's store, of status'
// document.
type Legacy struct {
	// Agent names the agent whose store it is (cline, roo, gemini);
	// absent for a Hermes store.
	Agent     string `json:"agent,omitempty"`
	Path      Path   `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
	Migrated  bool   `json:"migrated"`
}

// ObjectReason is an object of a bucket store and what is wrong with it:
// one that syncs skip (damaged_objects) or that the fleet key refused
// (rejected).
type ObjectReason struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// Policy is policy's document: a project's lifecycle and retention
// policy. Null is the default of a field that has one.
type Policy struct {
	Project        Path    `json:"project"`
	Lifecycle      *string `json:"lifecycle"` // running, completed, failed or null
	Test           bool    `json:"test"`
	RetentionDays  *int    `json:"retention_days"`
	Keep           *int    `json:"keep"`
	Cleanup        bool    `json:"cleanup"`
	LifecycleSince *string `json:"lifecycle_since"` // RFC 3339; null with no lifecycle
}

// Prune is prune's document.
type Prune struct {
	BytesFreed       int64  `json:"bytes_freed"`
	DeletedOrphan    int    `json:"deleted_orphan"`
	DeletedStale     int    `json:"deleted_stale"`
	DeletedCompleted int    `json:"deleted_completed"`
	DeletedFailed    int    `json:"deleted_failed"`
	DeletedTest      int    `json:"deleted_test"`
	Drops            []Drop `json:"drops"`
	Scanned          int    `json:"scanned"`
	Skipped          bool   `json:"skipped"`
	SnapshotsDropped int    `json:"snapshots_dropped"`
}

// PruneSkipped is prune --auto's document when the last prune ran less
// than the interval ago (Skipped is true).
type PruneSkipped struct {
	Skipped bool `json:"skipped"`
}

// Drop is one snapshot a prune dropped (or would drop) and the rule that
// dropped it: orphan, stale, completed, failed, test or size-cap.
type Drop struct {
	Project Path    `json:"project"`
	Machine *string `json:"machine,omitempty"` // as in Project
	ID      string  `json:"id"`
	Rule    string  `json:"rule"`
}

// GC is gc's document.
type GC struct {
	BytesFreed     int64 `json:"bytes_freed"`
	ObjectsDeleted int64 `json:"objects_deleted"`
}

// Verify is verify's document.
type Verify struct {
	Damaged          []Damaged      `json:"damaged"`
	DamagedObjects   []ObjectReason `json:"damaged_objects"`
	ObjectsChecked   int            `json:"objects_checked"`
	Rejected         []ObjectReason `json:"rejected"`
	SnapshotsChecked int            `json:"snapshots_checked"`
}

// Damaged is a damaged snapshot of verify's document.
type Damaged struct {
	Project Path    `json:"project"`
	Machine *string `json:"machine,omitempty"` // as in Project
	ID      string  `json:"id"`
	Reason  string  `json:"reason"`
}

// Repair is repair's document.
type Repair struct {
	PacksRead       int      `json:"packs_read"`
	ObjectsIndexed  int      `json:"objects_indexed"`
	DamagedPacks    []string `json:"damaged_packs"`
	UnreadablePacks []string `json:"unreadable_packs"`
	Projects        int      `json:"projects"`
	Snapshots       int      `json:"snapshots"`
	Turns           int      `json:"turns"`
	FromOldDatabase int      `json:"from_old_database"`
	OldDatabase     *string  `json:"old_database"`
}

// Export is export's document (not with -o -).
type Export struct {
	File     Path   `json:"file"`
	Snapshot string `json:"snapshot"`
}

// Migrate is migrate's document.
type Migrate struct {
	// Agent is --from-agent's value (cline, roo, gemini, all); absent for
	// the Hermes stores.
	Agent             string   `json:"agent,omitempty"`
	Errors            []string `json:"errors"`
	Projects          int      `json:"projects"`
	SnapshotsImported int      `json:"snapshots_imported"`
	SnapshotsSkipped  int      `json:"snapshots_skipped"`
}

// Clear is clear's document.
type Clear struct {
	Cleared Path `json:"cleared"`
}

// ClearLegacy is clear-legacy's document.
type ClearLegacy struct {
	BytesFreed int64    `json:"bytes_freed"`
	Deleted    []string `json:"deleted"`
	Kept       []string `json:"kept"`
}

// Root is root's document.
type Root struct {
	Root Path `json:"root"`
}

// Version is version's document.
type Version struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

// HookMessage is what hook claude-code prints when UserPromptSubmit took
// no checkpoint: a message Claude Code shows the user (Claude Code's hook
// output, not a --json document).
type HookMessage struct {
	SystemMessage string `json:"systemMessage"`
}

// HookSettings is what hook claude-code --print-settings prints: the hooks
// block of Claude Code's settings.json, by event name
// ("UserPromptSubmit", "PreToolUse", ...).
type HookSettings struct {
	Hooks map[string][]HookEntry `json:"hooks"`
}

// HookEntry is one event's entry of the hooks block: the hooks that run
// for the tools Matcher names (every tool when empty).
type HookEntry struct {
	Hooks   []HookCommand `json:"hooks"`
	Matcher string        `json:"matcher,omitempty"`
}

// HookCommand is a hook that runs Command (Type is "command"), for at
// most Timeout seconds (0: Claude Code's default for the event).
type HookCommand struct {
	Command string `json:"command"`
	Type    string `json:"type"`
	Timeout int    `json:"timeout,omitempty"`
}

// UI is the line ui prints with --json when its server is ready: the
// page's URL (with the token), the port on 127.0.0.1, and the token every
// request of the HTTP API must carry.
type UI struct {
	URL   string `json:"url"`
	Port  int    `json:"port"`
	Token string `json:"token"`
}

// ServeAnswer is the line serve writes for each request: the request's
// id, the exit status and the error's one line (without "casckpt: ") the
// command gives, and Result, the document it prints with --json (a
// json.RawMessage of exactly those bytes; nil when it printed none).
type ServeAnswer struct {
	ID     any     `json:"id"`
	Exit   int     `json:"exit"`
	Result any     `json:"result"`
	Error  *string `json:"error"`
}
