package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/casckpt/casckpt/integrations/internal/cmdline"
	"github.com/casckpt/casckpt/jsonapi"
)

// Runner runs casckpt with args (flags, "--json" among them, then "--",
// then positional arguments) and returns what it printed on stdout, or an
// error with the command's one-line message. It may be called from several
// goroutines at once.
type Runner func(ctx context.Context, args []string) ([]byte, error)

// NewServer returns the MCP server whose tools run casckpt through run on
// store (a directory or an s3:// URL, as the commands resolve it), which
// every result names. version is the server's version as the initialize
// handshake reports it.
func NewServer(run Runner, store, version string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "casckpt", Version: version}, nil)
	t := tools{s: s, run: run, store: store, specs: Tools()}
	addTool(t, "checkpoint_list", ListInput.args, func(_ ListInput, v jsonapi.List) ListOutput { return ListOutput{Snapshots: v} })
	addTool(t, "checkpoint_diff", DiffInput.args, DiffInput.bound)
	addTool(t, "checkpoint_restore", RestoreInput.args, same[RestoreInput, RestoreOutput], withDryRunDefault)
	addTool(t, "checkpoint_create", CreateInput.args, same[CreateInput, CreateOutput])
	addTool(t, "checkpoint_undo", UndoInput.args, same[UndoInput, UndoOutput], withDryRunDefault)
	addTool(t, "checkpoint_turns", TurnsInput.args, func(_ TurnsInput, v jsonapi.Turns) TurnsOutput { return TurnsOutput{Turns: v} })
	addTool(t, "checkpoint_file_history", FileHistoryInput.args, func(_ FileHistoryInput, v jsonapi.Log) FileHistoryOutput { return FileHistoryOutput{History: v} })
	addTool(t, "checkpoint_read_file", ReadFileInput.args, same[ReadFileInput, ReadFileOutput])
	addTool(t, "checkpoint_ls", LsInput.args, func(_ LsInput, v jsonapi.Ls) LsOutput { return LsOutput{Entries: v} })
	addTool(t, "checkpoint_pin", PinInput.args, same[PinInput, PinOutput])
	addTool(t, "checkpoint_record_write", RecordWriteInput.args, same[RecordWriteInput, RecordWriteOutput], nonEmpty("paths"))
	return s
}

// tools is what every tool shares: the server, the runner, the store and
// the tools' descriptions (Tools).
type tools struct {
	s     *sdk.Server
	run   Runner
	store string
	specs []Tool
}

// spec is the description of tool name, which must be In's.
func (t tools) spec(name string, in reflect.Type) *sdk.Tool {
	for _, s := range t.specs {
		if s.Name == name && s.Input == in {
			return &sdk.Tool{Name: s.Name, Description: s.Description, Annotations: s.Annotations}
		}
	}
	panic(fmt.Sprintf("mcp: Tools has no %s with arguments %v", name, in)) // a programming error: the table is fixed
}

// same is the tool output of a command whose document is an object.
func same[In any, D jsonapi.Doc](_ In, v D) D { return v }

// storeNamer is a tool output that names its store.
type storeNamer interface{ setStore(string) }

// addTool adds tool name (as Tools describes it), which runs the command args(in) returns and
// turns its document (a D, one of package jsonapi's) into the tool's output with wrap. A dir that
// is not absolute is refused: the server's working directory is no
// project a client means. tune may change the derived input schema.
//
// It uses the SDK's raw Server.AddTool and does the rest here, as the
// SDK's typed AddTool would (input and output schemas from In and Out,
// arguments validated against the input schema, failures as tool
// errors), except that the arguments and the output are decoded and
// encoded once, by encoding/json with the types' own methods: the typed
// AddTool validates a copy of each that it decodes and encodes again,
// which turns a path's "\udcXX" (a byte that is not UTF-8, see
// jsonapi.Path) into U+FFFD.
func addTool[In dirInput, D jsonapi.Doc, Out any](t tools, name string, args func(In) []string, wrap func(In, D) Out, tune ...func(*jsonschema.Schema)) {
	tool := t.spec(name, reflect.TypeFor[In]())
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", tool.Name, err)) // a programming error: the types are fixed
	}
	for _, f := range tune {
		f(in)
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", tool.Name, err))
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema of %s: %v", tool.Name, err))
	}
	tool.InputSchema, tool.OutputSchema = in, out
	t.s.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, _ error) {
		defer func() {
			if p := recover(); p != nil { // a bug must not end the session
				res = toolError(fmt.Errorf("%s failed: %v: report this as a casckpt bug", tool.Name, p))
			}
		}()
		input, err := arguments[In](req.Params.Arguments, resolved)
		if err != nil {
			return toolError(fmt.Errorf("%w (store %s)", err, t.store)), nil
		}
		if d := input.dir(); !filepath.IsAbs(d) {
			return toolError(fmt.Errorf("dir %q is not an absolute path: give the project directory's absolute path (store %s)", d, t.store)), nil
		}
		printed, err := t.run(ctx, args(input))
		if err != nil {
			return toolError(fmt.Errorf("%w (store %s)", err, t.store)), nil
		}
		var doc D
		dec := json.NewDecoder(bytes.NewReader(printed))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil {
			return toolError(fmt.Errorf("the command's JSON does not fit the tool's output schema (%v): report this as a casckpt bug", err)), nil
		}
		o := wrap(input, doc)
		any(&o).(storeNamer).setStore(t.store)
		result, err := json.Marshal(o)
		if err != nil {
			return toolError(fmt.Errorf("%s failed: %v: report this as a casckpt bug", tool.Name, err)), nil
		}
		text := string(result)
		if tx, ok := any(o).(texter); ok {
			if s, ok := tx.text(); ok {
				text = s
			}
		}
		return &sdk.CallToolResult{StructuredContent: json.RawMessage(result),
			Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
}

// dirInput is a tool's arguments: each names the project's dir.
type dirInput interface{ dir() string }

// texter is a tool output whose text content is the text it holds, when it
// holds one, rather than its JSON.
type texter interface {
	text() (string, bool)
}

// arguments decodes a tool's arguments (raw, as the client sent them)
// into an In after validating them against its input schema. A missing
// argument is In's zero value: the schema's defaults (dry_run) are what
// the zero values mean.
func arguments[In any](raw json.RawMessage, schema *jsonschema.Resolved) (In, error) {
	var in In
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	if err := schema.Validate(&m); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %v", err)
	}
	return in, nil
}

// toolError is the result of a tool that failed with err.
func toolError(err error) *sdk.CallToolResult {
	var res sdk.CallToolResult
	res.SetError(err)
	return &res
}

// withDryRunDefault makes dry_run default to true in the input schema.
func withDryRunDefault(s *jsonschema.Schema) {
	if p := s.Properties["dry_run"]; p != nil {
		p.Type, p.Types, p.Default = "boolean", nil, json.RawMessage("true")
	}
}

// command and flagIf build the tools' command lines (cmdline's, which
// the web page's API shares).
var (
	command = cmdline.Command
	flagIf  = cmdline.FlagIf
)

// dryRun is the value of an optional dry_run: true unless it is false.
func dryRun(p *bool) bool { return p == nil || *p }

func (in ListInput) args() []string {
	return command("list", append(flagIf(in.N > 0, "-n", strconv.Itoa(in.N)), flagIf(in.Session != "", "--session", in.Session)...), string(in.Dir))
}

func (in DiffInput) args() []string {
	pos := []string{string(in.Dir), in.Snap}
	if in.Snap2 != "" {
		pos = append(pos, in.Snap2)
	}
	return command("diff", []string{"--patch"}, pos...)
}

func (in RestoreInput) args() []string {
	f := append(flagIf(dryRun(in.DryRun), "--dry-run"), flagIf(in.Safe, "--safe")...)
	f = append(f, flagIf(in.MaxFileSizeMB > 0, "--max-file-size-mb", strconv.FormatInt(in.MaxFileSizeMB, 10))...)
	f = append(f, flagIf(in.MaxFiles > 0, "--max-files", strconv.Itoa(in.MaxFiles))...)
	f = append(f, flagIf(in.Fallback, "--fallback")...)
	return command("restore", f, append([]string{string(in.Dir), in.Snap}, pathStrings(in.Paths)...)...)
}

func (in CreateInput) args() []string {
	f := append(flagIf(in.Message != "", "-m", in.Message), flagIf(in.Keep > 0, "--keep", strconv.Itoa(in.Keep))...)
	f = append(f, flagIf(in.MaxFileSizeMB > 0, "--max-file-size-mb", strconv.FormatInt(in.MaxFileSizeMB, 10))...)
	f = append(f, flagIf(in.MaxFiles > 0, "--max-files", strconv.Itoa(in.MaxFiles))...)
	for _, p := range in.Exclude {
		f = append(f, "--exclude", p)
	}
	f = append(f, flagIf(in.MaxDirFiles > 0, "--max-dir-files", strconv.Itoa(in.MaxDirFiles))...)
	f = append(f, flagIf(in.MaxSizeMB != nil, "--max-size-mb", strconv.FormatInt(deref(in.MaxSizeMB), 10))...)
	f = append(f, flagIf(in.Session != "", "--session", in.Session)...)
	f = append(f, flagIf(in.Turn != "", "--turn", in.Turn)...)
	f = append(f, flagIf(in.EndTurn, "--end-turn")...)
	return command("snapshot", f, string(in.Dir))
}

func (in UndoInput) args() []string {
	pos := []string{string(in.Dir)}
	if in.Turn != "" {
		pos = append(pos, in.Turn)
	}
	return command("undo", append(flagIf(dryRun(in.DryRun), "--dry-run"), flagIf(in.Redo, "--redo")...), pos...)
}

func (in TurnsInput) args() []string {
	return command("turns", flagIf(in.Session != "", "--session", in.Session), string(in.Dir))
}

func (in FileHistoryInput) args() []string {
	return command("log", nil, string(in.Dir), string(in.Path))
}

func (in ReadFileInput) args() []string {
	f := append(flagIf(in.Fallback, "--fallback"), flagIf(in.Check != "", "--check", in.Check)...)
	return command("cat", f, string(in.Dir), in.Snap, string(in.Path))
}

// pathStrings is paths as command-line arguments.
func pathStrings(paths []jsonapi.Path) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = string(p)
	}
	return out
}

func (in LsInput) args() []string { return command("ls", nil, string(in.Dir), in.Snap) }

func (in PinInput) args() []string { return command("pin", nil, string(in.Dir), in.Snap) }

// args names each path by its absolute path in dir, so that no path is
// ever taken for the DIR argument, nor read from the server's working
// directory.
func (in RecordWriteInput) args() []string {
	pos := []string{string(in.Dir)}
	for _, p := range pathStrings(in.Paths) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(string(in.Dir), p)
		}
		pos = append(pos, p)
	}
	return command("record-write", nil, pos...)
}

func (in ListInput) dir() string        { return string(in.Dir) }
func (in DiffInput) dir() string        { return string(in.Dir) }
func (in RestoreInput) dir() string     { return string(in.Dir) }
func (in CreateInput) dir() string      { return string(in.Dir) }
func (in UndoInput) dir() string        { return string(in.Dir) }
func (in TurnsInput) dir() string       { return string(in.Dir) }
func (in FileHistoryInput) dir() string { return string(in.Dir) }
func (in ReadFileInput) dir() string    { return string(in.Dir) }
func (in LsInput) dir() string          { return string(in.Dir) }
func (in PinInput) dir() string         { return string(in.Dir) }
func (in RecordWriteInput) dir() string { return string(in.Dir) }

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// defaultMaxPatchBytes bounds checkpoint_diff's patches when
// max_patch_bytes is not given: about 16k tokens of a model's context.
const defaultMaxPatchBytes = 64 << 10

// bound keeps the patches of the files in.Paths selects, in order, until
// they hold in.MaxPatchBytes: the patch that crosses the bound is cut at
// its last line end within it, and the later ones are left out. Files'
// json_changes, which no bound limits, are left out.
func (in DiffInput) bound(doc jsonapi.Diff) DiffOutput {
	d := DiffOutput{Diff: doc}
	left := in.MaxPatchBytes
	if left <= 0 {
		left = defaultMaxPatchBytes
	}
	for i := range d.Files {
		f := &d.Files[i]
		f.JSONChanges = nil // unbounded: the tool gives the patches alone
		if f.Patch == nil {
			continue
		}
		switch p := *f.Patch; {
		case !in.selects(string(f.Path)) || d.PatchTruncated:
			f.Patch = nil
		case len(p) > left:
			d.PatchTruncated, f.Patch = true, nil
			if cut := p[:strings.LastIndexByte(p[:left], '\n')+1]; cut != "" {
				f.Patch = &cut
			}
		default:
			left -= len(p)
		}
	}
	return d
}

// selects reports whether the patch of the file at p (slash-separated,
// relative to the project) is asked for: every file when in.Paths is
// empty, else those equal to or below one of in.Paths.
func (in DiffInput) selects(p string) bool {
	if len(in.Paths) == 0 {
		return true
	}
	for _, sel := range pathStrings(in.Paths) {
		if filepath.IsAbs(sel) {
			rel, err := filepath.Rel(string(in.Dir), sel)
			if err != nil {
				continue
			}
			sel = rel
		}
		sel = path.Clean(filepath.ToSlash(sel))
		if sel == "." || p == sel || strings.HasPrefix(p, sel+"/") {
			return true
		}
	}
	return false
}

// nonEmpty makes the array argument name need at least one element.
func nonEmpty(name string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		one := 1
		s.Properties[name].MinItems = &one
	}
}
