//go:build !casckpt_lean

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// mcpSession connects an in-memory client to the MCP server of e's store.
func mcpSession(t *testing.T, e *env) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	g := &globals{env: func(k string) string { return e.vars[k] }}
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := newMCPServer(g).Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls tool name with args and decodes its structured content
// into a T; isError is the result's IsError, text its first text content.
func callTool[T any](t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (out T, isError bool, text string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		return out, true, text
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return out, false, text
}

func TestMCPToolsAndSchemas(t *testing.T) {
	cs := mcpSession(t, newEnv(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"checkpoint_create", "checkpoint_diff", "checkpoint_file_history", "checkpoint_list",
		"checkpoint_ls", "checkpoint_pin", "checkpoint_read_file", "checkpoint_record_write", "checkpoint_restore",
		"checkpoint_turns", "checkpoint_undo"}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if !strings.Contains(string(in), `"dir"`) || !strings.Contains(string(in), `"required":["dir"`) {
			t.Errorf("%s: input schema %s has no required dir", tool.Name, in)
		}
		if !strings.Contains(string(out), `"type":"object"`) {
			t.Errorf("%s: output schema %s", tool.Name, out)
		}
		destructive := tool.Name == "checkpoint_restore" || tool.Name == "checkpoint_undo"
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || *a.DestructiveHint != destructive {
			t.Errorf("%s: annotations %+v, want destructive %v", tool.Name, a, destructive)
		}
		var schema struct {
			Properties map[string]struct {
				Type    string
				Default *bool
			}
		}
		_ = json.Unmarshal(in, &schema)
		if p := schema.Properties["dry_run"]; destructive && (p.Type != "boolean" || p.Default == nil || !*p.Default) {
			t.Errorf("%s: dry_run does not default to true: %s", tool.Name, in)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

// TestMCPOutputsAreTheCommandsDocuments checks that each tool's document is
// what the command prints with --json: same fields (the server refuses one
// its output type lacks), same values.
func TestMCPOutputsAreTheCommandsDocuments(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "b.txt": "b\n"})
	cs := mcpSession(t, e)
	created, isErr, text := callTool[mcp.CreateOutput](t, cs, "checkpoint_create", map[string]any{"dir": dir, "message": "first", "turn": "t1", "session": "s1"})
	if isErr || !created.Created || created.ID == nil || *created.Turn != "t1" {
		t.Fatalf("create: %+v %s", created, text)
	}
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\n"})
	e.ok("snapshot", dir, "-m", "second", "--turn", "t1", "--end-turn")
	checks := []struct {
		tool    string
		args    map[string]any
		command []string
		wrap    string
	}{
		{"checkpoint_list", map[string]any{"dir": dir}, []string{"list", dir}, "snapshots"},
		{"checkpoint_turns", map[string]any{"dir": dir, "session": "s1"}, []string{"turns", dir, "--session", "s1"}, "turns"},
		{"checkpoint_file_history", map[string]any{"dir": dir, "path": "a.txt"}, []string{"log", dir, "a.txt"}, "history"},
		{"checkpoint_diff", map[string]any{"dir": dir, "snap": "@2", "snap2": "@1"}, []string{"diff", dir, "@2", "@1", "--patch"}, ""},
		{"checkpoint_ls", map[string]any{"dir": dir, "snap": "@2"}, []string{"ls", dir, "@2"}, "entries"},
		{"checkpoint_read_file", map[string]any{"dir": dir, "snap": "@2", "path": "a.txt"}, []string{"cat", dir, "@2", "a.txt"}, ""},
		{"checkpoint_undo", map[string]any{"dir": dir}, []string{"undo", dir, "--dry-run"}, ""},
		{"checkpoint_restore", map[string]any{"dir": dir, "snap": "@2"}, []string{"restore", dir, "@2", "--dry-run"}, ""},
		{"checkpoint_record_write", map[string]any{"dir": dir, "paths": []string{"a.txt"}}, []string{"record-write", dir, "a.txt"}, ""},
		{"checkpoint_pin", map[string]any{"dir": dir, "snap": "@2"}, []string{"pin", dir, "@2"}, ""},
	}
	for _, c := range checks {
		got, isErr, text := callTool[map[string]any](t, cs, c.tool, c.args)
		if isErr {
			t.Fatalf("%s: tool error %s", c.tool, text)
		}
		// What the tool adds to the command's document: the store, and
		// whether the patches were cut.
		if got["store"] != e.store {
			t.Errorf("%s: store %v, want %s", c.tool, got["store"], e.store)
		}
		delete(got, "store")
		if c.tool == "checkpoint_diff" {
			if got["patch_truncated"] != false {
				t.Errorf("%s: patch_truncated %v", c.tool, got["patch_truncated"])
			}
			delete(got, "patch_truncated")
		}
		var doc any = got
		if c.wrap != "" {
			doc = got[c.wrap]
		}
		want := jsonOf[any](t, e.ok(append(c.command, "--json")...).out)
		gotJSON, _ := json.Marshal(doc)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%s:\n got %s\nwant %s", c.tool, gotJSON, wantJSON)
		}
	}
}

func TestMCPDiffRestoreAndErrors(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n"})
	cs := mcpSession(t, e)
	first, _, _ := callTool[mcp.CreateOutput](t, cs, "checkpoint_create", map[string]any{"dir": dir})
	writeFiles(t, dir, map[string]string{"a.txt": "one\ntwo\n", "new.txt": "x\n"})

	diff, isErr, text := callTool[mcp.DiffOutput](t, cs, "checkpoint_diff", map[string]any{"dir": dir, "snap": *first.ID})
	if isErr || diff.To != "worktree" || diff.FilesChanged != 2 || diff.Insertions != 2 {
		t.Fatalf("diff: %+v %s", diff, text)
	}
	dry, isErr, text := callTool[mcp.RestoreOutput](t, cs, "checkpoint_restore", map[string]any{"dir": dir, "snap": *first.ID})
	if isErr || !dry.DryRun || dry.Written != 1 || dry.Deleted != 1 {
		t.Fatalf("dry-run restore: %+v %s", dry, text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("a dry run changed a.txt: %q", b)
	}
	real, isErr, text := callTool[mcp.RestoreOutput](t, cs, "checkpoint_restore", map[string]any{"dir": dir, "snap": *first.ID, "dry_run": false})
	if isErr || real.DryRun || real.PreRestoreID == nil {
		t.Fatalf("restore: %+v %s", real, text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a.txt after restore: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Fatalf("new.txt survived the restore: %v", err)
	}

	bad := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"checkpoint_diff", map[string]any{"dir": dir}, "snap"},                                  // missing a required argument
		{"checkpoint_list", map[string]any{"dir": 42}, "dir"},                                    // wrong type
		{"checkpoint_restore", map[string]any{"dir": dir, "snap": "@1", "dry_run": "no"}, ""},    // wrong type
		{"checkpoint_list", map[string]any{"dir": dir, "bogus": true}, "bogus"},                  // unknown argument
		{"checkpoint_restore", map[string]any{"dir": dir, "snap": "ffffffff"}, "ffffffff"},       // unknown snapshot
		{"checkpoint_list", map[string]any{"dir": dir, "session": "bad\nid"}, "session"},         // the command refuses it
		{"checkpoint_read_file", map[string]any{"dir": dir, "snap": "@1", "path": "--json"}, ""}, // a path is never a flag
	}
	for _, b := range bad {
		_, isErr, text := callTool[map[string]any](t, cs, b.tool, b.args)
		if !isErr || !strings.Contains(text, b.want) {
			t.Errorf("%s %v: isError %v, text %q; want a tool error naming %q", b.tool, b.args, isErr, text, b.want)
		}
	}
	if _, isErr, text := callTool[mcp.ListOutput](t, cs, "checkpoint_list", map[string]any{"dir": dir}); isErr {
		t.Fatalf("the server does not answer after the errors: %s", text)
	}
}

// TestMCPReadFileGivesTextAsText checks checkpoint_read_file: a UTF-8 text
// file comes back as content and as the result's text, as it is; other
// bytes (invalid UTF-8, a NUL) as content_base64, and cat --json agrees.
func TestMCPReadFileGivesTextAsText(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	text := "héllo <wörld> & \"quotes\"\n\tline two\n"
	binary := "\xff\xfe\x00bin"
	writeFiles(t, dir, map[string]string{"a.txt": text, "b.bin": binary, "nul.txt": "a\x00b\n", "empty": ""})
	e.ok("snapshot", dir)
	cs := mcpSession(t, e)
	for _, c := range []struct {
		path, text, base64 string
	}{
		{"a.txt", text, ""},
		{"empty", "", ""},
		{"b.bin", "", base64.StdEncoding.EncodeToString([]byte(binary))},
		{"nul.txt", "", base64.StdEncoding.EncodeToString([]byte("a\x00b\n"))},
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_read_file",
			Arguments: map[string]any{"dir": dir, "snap": "@1", "path": c.path}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", c.path, err, res)
		}
		var out mcp.ReadFileOutput
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		shown := res.Content[0].(*sdk.TextContent).Text
		if c.base64 == "" {
			if out.Content == nil || *out.Content != c.text || out.ContentBase64 != nil || shown != c.text {
				t.Errorf("%s: structured %s, text %q; want the text %q as content and as the text", c.path, raw, shown, c.text)
			}
		} else if out.Content != nil || out.ContentBase64 == nil || *out.ContentBase64 != c.base64 || !strings.Contains(shown, c.base64) {
			t.Errorf("%s: structured %s, text %q; want content_base64 %s", c.path, raw, shown, c.base64)
		}
		doc := res.StructuredContent.(map[string]any)
		delete(doc, "store")
		if cat := e.ok("cat", dir, "@1", c.path, "--json").out; !reflect.DeepEqual(jsonOf[map[string]any](t, cat), doc) {
			t.Errorf("%s: cat --json %s, the tool %s", c.path, cat, raw)
		}
	}
}

// TestMCPConcurrentCalls runs tool calls at once (a client may send them
// without waiting): each runs its own command, and all succeed.
func TestMCPConcurrentCalls(t *testing.T) {
	e := newEnv(t)
	cs := mcpSession(t, e)
	var dirs []string
	for range 3 {
		d := t.TempDir()
		writeFiles(t, d, map[string]string{"f.txt": d + "\n"})
		dirs = append(dirs, d)
	}
	errs := make(chan string, 2*len(dirs))
	for _, d := range dirs {
		for _, tool := range []string{"checkpoint_create", "checkpoint_list"} {
			go func() {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"dir": d}})
				switch {
				case err != nil:
					errs <- tool + ": " + err.Error()
				case res.IsError:
					errs <- tool + ": " + res.Content[0].(*sdk.TextContent).Text
				default:
					errs <- ""
				}
			}()
		}
	}
	for range 2 * len(dirs) {
		if msg := <-errs; msg != "" {
			t.Error(msg)
		}
	}
	for _, d := range dirs {
		if got := jsonOf[[]map[string]any](t, e.ok("list", d, "--json").out); len(got) != 1 {
			t.Errorf("%s has %d snapshots, want 1", d, len(got))
		}
	}
}

// TestMCPArgumentsAreTheFlags checks each tool's arguments against its
// command (as mcp.Tools names it): an argument whose cli tag names a flag
// is that flag of the command, under its name with _ (or its shorthand),
// of the same type, and says what the flag's --help line says, default
// included (dry_run: the tool's own default, true); one whose tag names a
// positional argument is in the command's usage line.
func TestMCPArgumentsAreTheFlags(t *testing.T) {
	root := newRootCommand(&globals{env: func(string) string { return "" }})
	res, err := mcpSession(t, newEnv(t)).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		schemas[tool.Name] = tool.InputSchema.(map[string]any)["properties"].(map[string]any)
	}
	flags := 0
	for _, spec := range mcp.Tools() {
		cmd, _, err := root.Find([]string{spec.Command})
		if err != nil || cmd.Name() != spec.Command {
			t.Fatalf("%s: no command %q: %v", spec.Name, spec.Command, err)
		}
		for _, f := range reflect.VisibleFields(spec.Input) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			tag := f.Tag.Get("cli")
			if tag == "-" {
				continue // an option of the tool alone
			}
			if !strings.HasPrefix(tag, "-") {
				if !slices.Contains(strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(cmd.Use)), tag) {
					t.Errorf("%s's %s is the positional %s, which %q lacks", spec.Name, name, tag, cmd.Use)
				}
				continue
			}
			flag := cmd.Flags().Lookup(strings.TrimPrefix(tag, "--"))
			if len(tag) == 2 {
				flag = cmd.Flags().ShorthandLookup(tag[1:])
			}
			if flag == nil {
				t.Errorf("%s's %s is the flag %s, which %s lacks", spec.Name, name, tag, spec.Command)
				continue
			}
			flags++
			if name != strings.ReplaceAll(flag.Name, "-", "_") && name != flag.Shorthand {
				t.Errorf("%s's argument %s is %s --%s: name it %s", spec.Name, name, spec.Command, flag.Name, strings.ReplaceAll(flag.Name, "-", "_"))
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			kind := ft.Kind().String()
			if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String {
				kind = "stringArray" // a repeatable flag
			}
			if flag.Value.Type() != kind {
				t.Errorf("%s's %s is a %s; %s --%s is a %s", spec.Name, name, kind, spec.Command, flag.Name, flag.Value.Type())
			}
			_, want := pflag.UnquoteUsage(flag)
			switch {
			case name == "dry_run":
				want += " (default true)"
			case flag.DefValue != "" && flag.DefValue != "0" && flag.DefValue != "false" && flag.DefValue != "[]":
				want += " (default " + flag.DefValue + ")"
			}
			if got := schemas[spec.Name][name].(map[string]any)["description"]; got != want {
				t.Errorf("%s's %s says %q; %s --%s says %q", spec.Name, name, got, cmd.Name(), flag.Name, want)
			}
		}
	}
	if flags < 15 {
		t.Errorf("only %d tool arguments are flags", flags)
	}
}

// TestMCPDiffGivesThePatch checks checkpoint_diff through the commands:
// each file's patch is what casckpt diff prints for it, paths selects the
// files, and the text content shows the patches.
func TestMCPDiffGivesThePatch(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "sub/b.txt": "b\n"})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"a.txt": "two\n", "sub/b.txt": "b\nc\n"})
	cs := mcpSession(t, e)
	whole := e.ok("diff", dir, "@1").out
	out, isErr, text := callTool[mcp.DiffOutput](t, cs, "checkpoint_diff", map[string]any{"dir": dir, "snap": "@1"})
	if isErr || len(out.Files) != 2 || out.Files[0].Patch == nil || out.Files[1].Patch == nil || out.PatchTruncated {
		t.Fatalf("diff: %+v %s", out, text)
	}
	if got := *out.Files[0].Patch + *out.Files[1].Patch; got != whole || !strings.Contains(got, "-one\n+two\n") {
		t.Errorf("the patches %q, casckpt diff %q", got, whole)
	}
	if !strings.Contains(text, "modified a.txt (+1 -1)\n") || !strings.Contains(text, whole) {
		t.Errorf("the text content %q lacks the file list or the patches", text)
	}
	out, _, _ = callTool[mcp.DiffOutput](t, cs, "checkpoint_diff", map[string]any{"dir": dir, "snap": "@1", "paths": []string{"sub"}})
	if out.Files[0].Patch != nil || out.Files[1].Patch == nil || !strings.Contains(*out.Files[1].Patch, "+c\n") {
		t.Errorf("paths [sub]: %+v", out.Files)
	}
}

// TestMCPRefusesARelativeDir checks that a relative dir, which the server
// would read from its own working directory, is a tool error that names
// the store, not an empty list.
func TestMCPRefusesARelativeDir(t *testing.T) {
	e := newEnv(t)
	cs := mcpSession(t, e)
	for _, tool := range []string{"checkpoint_list", "checkpoint_create", "checkpoint_turns"} {
		_, isErr, text := callTool[map[string]any](t, cs, tool, map[string]any{"dir": "."})
		if !isErr || !strings.Contains(text, "absolute") || !strings.Contains(text, e.store) {
			t.Errorf("%s with dir \".\": isError %v, %q; want an error that names the store %s", tool, isErr, text, e.store)
		}
	}
}
