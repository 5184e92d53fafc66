package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMCPEndToEnd drives the built binary's `casckpt mcp` over stdio with
// the official TypeScript MCP SDK (testdata/mcp-e2e/script.mjs): tools,
// schemas, a checkpoint, a diff, a dry-run and a real restore, malformed
// arguments as tool errors. It needs node and `npm ci` in testdata/mcp-e2e
// (.ci/run does it).
func TestMCPEndToEnd(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: install Node 20 to run the MCP end-to-end test")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "mcp-e2e", "script.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the TypeScript MCP SDK is not installed: run npm ci in cmd/casckpt/testdata/mcp-e2e")
	}
	b := newBinEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, node, script, b.bin, t.TempDir())
	c.Env = []string{"HOME=" + b.home, "CASCKPT_HOME=" + b.store(), "PATH=/nonexistent"}
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("node script.mjs: %v\n%s", err, out)
	}
	b.ok("verify")
}

// TestMCPInspectorCLI drives the built binary's `casckpt mcp` with the MCP
// Inspector's CLI (`mcp-inspector --cli`, from testdata/mcp-e2e's
// lockfile; .ci/run installs it): it lists every tool and calls each one,
// one Inspector process per call, as a person checking the server would.
// A diff shows its patch text, a read file its text, every result its
// store.
func TestMCPInspectorCLI(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: install Node 20 to run the MCP Inspector test")
	}
	inspector, err := filepath.Abs(filepath.Join("testdata", "mcp-e2e", "node_modules", "@modelcontextprotocol", "inspector", "cli", "build", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inspector); err != nil {
		t.Skip("the MCP Inspector is not installed: run npm ci in cmd/casckpt/testdata/mcp-e2e")
	}
	b := newBinEnv(t)
	dir := t.TempDir()
	// inspect runs the Inspector's CLI against casckpt mcp and decodes
	// what it prints: the method's result.
	inspect := func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, node, append([]string{inspector, "--cli", b.bin, "mcp"}, args...)...)
		// The Inspector runs node by name; the server gets this environment.
		c.Env = []string{"HOME=" + b.home, "CASCKPT_HOME=" + b.store(), "PATH=" + filepath.Dir(node)}
		var stderr strings.Builder
		c.Stderr = &stderr
		out, err := c.Output()
		var doc map[string]any
		if err != nil || json.Unmarshal(out, &doc) != nil {
			t.Fatalf("mcp-inspector --cli %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return doc
	}
	// call calls tool with the key=value arguments (values as the
	// Inspector reads them: JSON where they parse, else strings) and
	// returns its structured content and text, failing on a tool error.
	call := func(tool string, args ...string) (map[string]any, string) {
		t.Helper()
		res := inspect(append([]string{"--method", "tools/call", "--tool-name", tool, "--tool-arg", "dir=" + dir}, args...)...)
		content, _ := res["content"].([]any)
		var text string
		if len(content) > 0 {
			text, _ = content[0].(map[string]any)["text"].(string)
		}
		doc, _ := res["structuredContent"].(map[string]any)
		if res["isError"] == true || doc == nil {
			t.Fatalf("%s %v: %v", tool, args, res)
		}
		if doc["store"] != b.store() {
			t.Errorf("%s: store %v, want %s", tool, doc["store"], b.store())
		}
		return doc, text
	}

	var names []string
	for _, tool := range inspect("--method", "tools/list")["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	want := []string{"checkpoint_create", "checkpoint_diff", "checkpoint_file_history", "checkpoint_list",
		"checkpoint_ls", "checkpoint_pin", "checkpoint_read_file", "checkpoint_record_write", "checkpoint_restore",
		"checkpoint_turns", "checkpoint_undo"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools/list: %q, want %q", names, want)
	}
	called := map[string]bool{}
	check := func(tool string, ok bool, doc map[string]any) {
		t.Helper()
		called[tool] = true
		if !ok {
			t.Errorf("%s: %v", tool, doc)
		}
	}

	writeFiles(t, dir, map[string]string{"a.txt": "one\n"})
	doc, _ := call("checkpoint_create", "message=first", "session=s1", "turn=t1")
	check("checkpoint_create", doc["created"] == true, doc)
	writeFiles(t, dir, map[string]string{"a.txt": "two\n", "b.txt": "b\n"})
	call("checkpoint_create", "turn=t1", "end_turn=true")
	doc, text := call("checkpoint_diff", "snap=@2", "snap2=@1", `paths=["a.txt"]`)
	check("checkpoint_diff", strings.Contains(text, "-one\n+two\n") && doc["patch_truncated"] == false, map[string]any{"text": text, "doc": doc})
	doc, text = call("checkpoint_read_file", "snap=@2", "path=a.txt")
	check("checkpoint_read_file", text == "one\n" && doc["content"] == "one\n", doc)
	doc, _ = call("checkpoint_list")
	check("checkpoint_list", len(doc["snapshots"].([]any)) == 2, doc)
	doc, _ = call("checkpoint_turns", "session=s1")
	check("checkpoint_turns", len(doc["turns"].([]any)) == 1, doc)
	doc, _ = call("checkpoint_file_history", "path=a.txt")
	check("checkpoint_file_history", len(doc["history"].([]any)) == 2, doc)
	doc, _ = call("checkpoint_ls", "snap=@1")
	check("checkpoint_ls", len(doc["entries"].([]any)) == 2, doc)
	doc, _ = call("checkpoint_pin", "snap=@2")
	check("checkpoint_pin", doc["pinned"] != "", doc)
	writeFiles(t, dir, map[string]string{"b.txt": "b2\n"})
	doc, _ = call("checkpoint_record_write", `paths=["b.txt"]`)
	check("checkpoint_record_write", doc["recorded"] == 1.0, doc)
	doc, _ = call("checkpoint_undo")
	check("checkpoint_undo", doc["dry_run"] == true && doc["turn"] == "t1", doc)
	doc, _ = call("checkpoint_restore", "snap=@2")
	check("checkpoint_restore", doc["dry_run"] == true && doc["written"] == 1.0 && doc["deleted"] == 1.0, doc)
	doc, _ = call("checkpoint_restore", "snap=@2", "dry_run=false")
	check("checkpoint_restore", doc["dry_run"] == false, doc)
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "one\n" {
		t.Errorf("a.txt after the restore: %q", got)
	}
	for _, name := range want {
		if !called[name] {
			t.Errorf("%s was not called", name)
		}
	}
	b.ok("verify")
}

// TestMCPMalformedMessages sends the built binary's server lines that are
// no JSON-RPC message, and one over maxRequestLine, between real ones: each
// gets an error with a null id (a parse error; for the long one, an invalid
// request), the session goes on, and the server exits 0 when stdin closes.
func TestMCPMalformedMessages(t *testing.T) {
	b := newBinEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := b.commandContext(ctx, "mcp")
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		"not json\n{}\n[1]\n[]\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	// A notification too long to read (so without an id to answer), written
	// while the answers are read.
	go io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"pad":"`+strings.Repeat("y", maxRequestLine)+`"}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	var parseErrors, tooLong int
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if msg.Error != nil && msg.Error.Code == -32700 && msg.ID == nil {
			parseErrors++
		}
		if msg.Error != nil && msg.Error.Code == -32600 && msg.ID == nil {
			tooLong++
		}
		if msg.ID != nil && *msg.ID == 2 {
			if !strings.Contains(string(msg.Result), `"checkpoint_restore"`) {
				t.Fatalf("tools/list: %s", sc.Bytes())
			}
			break
		}
	}
	if parseErrors != 4 || tooLong != 1 {
		t.Errorf("%d parse errors and %d invalid requests, want 4 and 1", parseErrors, tooLong)
	}
	stdin.Close()
	go io.Copy(io.Discard, stdout)
	if err := c.Wait(); err != nil {
		t.Fatalf("casckpt mcp after stdin closed: %v", err)
	}
}
