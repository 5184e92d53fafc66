package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// connect serves run's tools to an in-memory client.
func connect(t *testing.T, run mcp.Runner) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(run, "/the/store", "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestArgumentsNeverBecomeFlags checks the command lines the tools run:
// flags first, then "--", so a path or reference starting with - stays
// a positional argument, and the dry run is the default.
func TestArgumentsNeverBecomeFlags(t *testing.T) {
	var got [][]string
	cs := connect(t, func(_ context.Context, args []string) ([]byte, error) {
		got = append(got, args)
		return nil, errors.New("stop here")
	})
	calls := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"checkpoint_restore", map[string]any{"dir": "/p", "snap": "--safe", "paths": []string{"-x"}},
			[]string{"restore", "--json", "--dry-run", "--", "/p", "--safe", "-x"}},
		{"checkpoint_restore", map[string]any{"dir": "/p", "snap": "@1", "dry_run": false, "safe": true},
			[]string{"restore", "--json", "--safe", "--", "/p", "@1"}},
		{"checkpoint_undo", map[string]any{"dir": "/p"}, []string{"undo", "--json", "--dry-run", "--", "/p"}},
		{"checkpoint_create", map[string]any{"dir": "/p", "message": "-m", "max_size_mb": 0},
			[]string{"snapshot", "--json", "-m", "-m", "--max-size-mb", "0", "--", "/p"}},
		{"checkpoint_list", map[string]any{"dir": "/p", "n": 3}, []string{"list", "--json", "-n", "3", "--", "/p"}},
		{"checkpoint_record_write", map[string]any{"dir": "/p", "paths": []string{"-x", "/p/y", "../z"}},
			[]string{"record-write", "--json", "--", "/p", "/p/-x", "/p/y", "/z"}},
		{"checkpoint_diff", map[string]any{"dir": "/p", "snap": "-1", "snap2": "@2"}, []string{"diff", "--json", "--patch", "--", "/p", "-1", "@2"}},
		{"checkpoint_ls", map[string]any{"dir": "/p", "snap": "-1"}, []string{"ls", "--json", "--", "/p", "-1"}},
		{"checkpoint_read_file", map[string]any{"dir": "/p", "snap": "-1", "path": "-x", "fallback": true, "check": "json"},
			[]string{"cat", "--json", "--fallback", "--check", "json", "--", "/p", "-1", "-x"}},
		{"checkpoint_restore", map[string]any{"dir": "/p", "snap": "@1", "fallback": true},
			[]string{"restore", "--json", "--dry-run", "--fallback", "--", "/p", "@1"}},
		{"checkpoint_pin", map[string]any{"dir": "/p", "snap": "-1"}, []string{"pin", "--json", "--", "/p", "-1"}},
	}
	for _, c := range calls {
		got = nil
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError {
			t.Fatalf("%s: %v %+v", c.tool, err, res)
		}
		if len(got) != 1 || !slices.Equal(got[0], c.want) {
			t.Errorf("%s %v ran %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// TestRecordWriteNeedsAPath checks that checkpoint_record_write with no
// path is refused: the command would take dir for a path in the server's
// working directory.
func TestRecordWriteNeedsAPath(t *testing.T) {
	ran := 0
	cs := connect(t, func(context.Context, []string) ([]byte, error) { ran++; return []byte(`{"recorded":0}`), nil })
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_record_write", Arguments: map[string]any{"dir": "/p", "paths": []string{}}})
	if err != nil || !res.IsError || ran != 0 {
		t.Fatalf("no paths: %v %+v, %d commands ran; want a tool error and none", err, res, ran)
	}
}

// TestFailuresAreToolErrors checks that a command's error, a document
// with a field the tool's output lacks, and a panic are tool errors, and
// that the server keeps serving.
func TestFailuresAreToolErrors(t *testing.T) {
	outputs := []func() ([]byte, error){
		func() ([]byte, error) { return nil, errors.New("no snapshot ffff: casckpt list shows them") },
		func() ([]byte, error) { return []byte(`[{"id":"x","new_field":1}]`), nil },
		func() ([]byte, error) { panic("boom") },
		func() ([]byte, error) { return []byte(`[]`), nil },
	}
	i := 0
	cs := connect(t, func(context.Context, []string) ([]byte, error) { i++; return outputs[i-1]() })
	wants := []string{"no snapshot ffff", "new_field", "boom"}
	for _, want := range wants {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": "/p"}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, want) {
			t.Fatalf("want a tool error naming %q, got %v %+v", want, err, res)
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": "/p"}})
	if err != nil || res.IsError {
		t.Fatalf("the server does not serve after the failures: %v %+v", err, res)
	}
	if got := res.StructuredContent.(map[string]any)["snapshots"]; got == nil {
		t.Fatalf("an empty list is %v, want []", res.StructuredContent)
	}
}

// TestRelativeDirIsRefused checks that a dir that is not absolute is a
// tool error naming the store, and that no command runs for it.
func TestRelativeDirIsRefused(t *testing.T) {
	ran := 0
	cs := connect(t, func(context.Context, []string) ([]byte, error) { ran++; return []byte(`[]`), nil })
	for _, dir := range []string{"", ".", "proj", "./proj", "../proj"} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": dir}})
		if err != nil || !res.IsError {
			t.Fatalf("dir %q: %v %+v, want a tool error", dir, err, res)
		}
		if text := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(text, "absolute") || !strings.Contains(text, "/the/store") {
			t.Errorf("dir %q: %q, want it to say dir must be absolute and name the store", dir, text)
		}
	}
	if ran != 0 {
		t.Errorf("%d commands ran for relative dirs", ran)
	}
}

// TestResultsNameTheStore checks that every tool's result, and a
// command's error, names the store.
func TestResultsNameTheStore(t *testing.T) {
	docs := map[string]string{
		"list": `[]`, "turns": `[]`, "log": `[]`, "ls": `[]`,
		"diff":         `{"from":"a","to":"worktree","files":[],"files_changed":0,"insertions":0,"deletions":0}`,
		"restore":      `{"restored_to":"a","pre_restore_id":null,"written":0,"deleted":0,"dry_run":true,"changes":[],"skipped":[]}`,
		"snapshot":     `{"created":false,"id":null,"project":"/p","files":0,"bytes":0,"session":null,"turn":null,"excluded_by_default":0,"unreadable":[]}`,
		"undo":         `{"turn":"t","pre_undo_id":null,"reverted":[],"merged":[],"conflicts":[],"dry_run":true}`,
		"cat":          `{"path":"a","content":"x"}`,
		"pin":          `{"pinned":"a"}`,
		"record-write": `{"recorded":1}`,
	}
	cs := connect(t, func(_ context.Context, args []string) ([]byte, error) { return []byte(docs[args[0]]), nil })
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"snap": "@1", "path": "a", "paths": []string{"a"}}
	for _, tool := range tools.Tools {
		a := map[string]any{"dir": "/p"}
		for name := range tool.InputSchema.(map[string]any)["properties"].(map[string]any) {
			if v, ok := args[name]; ok {
				a[name] = v
			}
		}
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool.Name, Arguments: a})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool.Name, err, res)
		}
		if got := res.StructuredContent.(map[string]any)["store"]; got != "/the/store" {
			t.Errorf("%s: store %v, want /the/store", tool.Name, got)
		}
	}
	if len(tools.Tools) != 11 {
		t.Errorf("%d tools, want 11", len(tools.Tools))
	}
	cs = connect(t, func(context.Context, []string) ([]byte, error) { return nil, errors.New("no snapshot ffff") })
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": "/p"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "/the/store") {
		t.Fatalf("an error does not name the store: %v %+v", err, res)
	}
}

// TestDiffPatchesAreSelectedAndBounded checks checkpoint_diff's patches:
// only the selected files have one, the bound cuts at a line end and
// leaves the later ones out, and patch_truncated says so; json_changes
// are left out.
func TestDiffPatchesAreSelectedAndBounded(t *testing.T) {
	patch := func(p string) string {
		return "diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n@@ -1 +1 @@\n-old\n+new\n"
	}
	doc, _ := json.Marshal(map[string]any{"from": "a", "to": "worktree", "files_changed": 3, "insertions": 3, "deletions": 3,
		"files": []map[string]any{
			{"path": "a.txt", "status": "modified", "insertions": 1, "deletions": 1, "binary": false, "patch": patch("a.txt"),
				"json_changes": []map[string]any{{"path": "$", "op": "changed", "from": []int{}, "to": map[string]int{}}}},
			{"path": "sub/b.txt", "status": "modified", "insertions": 1, "deletions": 1, "binary": false, "patch": patch("sub/b.txt")},
			{"path": "sub/c.txt", "status": "modified", "insertions": 1, "deletions": 1, "binary": false, "patch": patch("sub/c.txt")},
		}})
	var ran []string
	cs := connect(t, func(_ context.Context, args []string) ([]byte, error) { ran = args; return doc, nil })
	for _, c := range []struct {
		args      map[string]any
		want      []string // each file's patch, "" for none
		truncated bool
	}{
		{map[string]any{}, []string{patch("a.txt"), patch("sub/b.txt"), patch("sub/c.txt")}, false},
		{map[string]any{"paths": []string{"sub"}}, []string{"", patch("sub/b.txt"), patch("sub/c.txt")}, false},
		{map[string]any{"paths": []string{"/p/a.txt", "./sub/c.txt"}}, []string{patch("a.txt"), "", patch("sub/c.txt")}, false},
		{map[string]any{"max_patch_bytes": len(patch("a.txt")) + 40}, []string{patch("a.txt"), "diff --git a/sub/b.txt b/sub/b.txt\n", ""}, true},
		{map[string]any{"max_patch_bytes": 10}, []string{"", "", ""}, true},
	} {
		c.args["dir"], c.args["snap"] = "/p", "@1"
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_diff", Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%v: %v %+v", c.args, err, res)
		}
		if !slices.Equal(ran, []string{"diff", "--json", "--patch", "--", "/p", "@1"}) {
			t.Fatalf("ran %q", ran)
		}
		var out mcp.DiffOutput
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for i, f := range out.Files {
			got := ""
			if f.Patch != nil {
				got = *f.Patch
			}
			text.WriteString(got)
			if f.JSONChanges != nil {
				t.Errorf("%v: %s has json_changes, which no bound limits", c.args, f.Path)
			}
			if got != c.want[i] {
				t.Errorf("%v: %s's patch %q, want %q", c.args, f.Path, got, c.want[i])
			}
		}
		if out.PatchTruncated != c.truncated {
			t.Errorf("%v: patch_truncated %v, want %v", c.args, out.PatchTruncated, c.truncated)
		}
		if shown := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(shown, "modified sub/c.txt (+1 -1)\n") || !strings.Contains(shown, text.String()) {
			t.Errorf("%v: text %q, want the file list and the patches %q", c.args, shown, text.String())
		}
	}
}
