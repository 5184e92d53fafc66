package jsonapi

// Doc is a document a command prints: one of the types Documents lists.
// Only this package's types are Docs (the method is unexported), so what
// a command prints (cmd/casckpt's emit takes a Doc) is one of them.
type Doc interface{ document() }

// Document is one document: the command that prints it, as the ###
// heading of docs/commands.md names it ("" for Error, which every command
// prints on failure), and a zero value of its type.
type Document struct {
	Command string
	Value   Doc
}

// Documents lists every document, in the order of docs/commands.md. A
// command with two documents (prune, hook) lists both; a type two
// commands print (Undo) is listed for each.
func Documents() []Document {
	return []Document{
		{"", Error{}},
		{"snapshot", Snapshot{}},
		{"list", List{}},
		{"turns", Turns{}},
		{"diff", Diff{}},
		{"restore", Restore{}},
		{"record-write", RecordWrite{}},
		{"undo", Undo{}},
		{"redo", Undo{}},
		{"cat", Cat{}},
		{"ls", Ls{}},
		{"log", Log{}},
		{"pin", Pin{}},
		{"unpin", Unpin{}},
		{"forget", Forget{}},
		{"status", Status{}},
		{"policy", Policy{}},
		{"prune", Prune{}},
		{"prune", PruneSkipped{}},
		{"gc", GC{}},
		{"verify", Verify{}},
		{"repair", Repair{}},
		{"export", Export{}},
		{"migrate", Migrate{}},
		{"clear", Clear{}},
		{"clear-legacy", ClearLegacy{}},
		{"root", Root{}},
		{"version", Version{}},
		{"hook", HookMessage{}},
		{"hook", HookSettings{}},
		{"serve", ServeAnswer{}},
		{"ui", UI{}},
	}
}

func (Error) document()        {}
func (Snapshot) document()     {}
func (List) document()         {}
func (Turns) document()        {}
func (Diff) document()         {}
func (Restore) document()      {}
func (RecordWrite) document()  {}
func (Undo) document()         {}
func (Cat) document()          {}
func (Ls) document()           {}
func (Log) document()          {}
func (Pin) document()          {}
func (Unpin) document()        {}
func (Forget) document()       {}
func (Status) document()       {}
func (Policy) document()       {}
func (Prune) document()        {}
func (PruneSkipped) document() {}
func (GC) document()           {}
func (Verify) document()       {}
func (Repair) document()       {}
func (Export) document()       {}
func (Migrate) document()      {}
func (Clear) document()        {}
func (ClearLegacy) document()  {}
func (Root) document()         {}
func (Version) document()      {}
func (HookMessage) document()  {}
func (ServeAnswer) document()  {}
func (UI) document()           {}
func (HookSettings) document() {}
