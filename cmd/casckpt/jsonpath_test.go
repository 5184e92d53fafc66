//go:build !casckpt_lean

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fsencoded returns what Python (python3, the standard library only) reads
// from doc, a JSON document: os.fsencode of the string at keys (object
// keys, or list indices as numbers), in hex.
func fsencoded(t *testing.T, python, doc string, keys ...any) string {
	t.Helper()
	path, _ := json.Marshal(keys)
	script := `
import json, os, sys
v = json.loads(sys.stdin.buffer.read().decode("utf-8"))
for k in json.loads(sys.argv[1]):
    v = v[k]
sys.stdout.write(os.fsencode(v).hex())
`
	cmd := exec.Command(python, "-c", script, string(path))
	cmd.Stdin = strings.NewReader(doc)
	cmd.Env = []string{"LC_ALL=C.UTF-8"}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 reading %v of %s: %v", keys, doc, err)
	}
	return string(out)
}

// TestPathsNotUTF8InJSON: a project directory and a file whose names hold
// a byte that is not UTF-8 (0xff) are written as \udcff in every --json
// document that names them (snapshot, diff, ls, restore, undo, status),
// the documents stay valid UTF-8, and Python's json.loads and os.fsencode
// give the exact bytes back; list, log and turns work on such a project.
// Through the MCP server, a tool's dir and path given with \udcff name the
// same directory and file, and its structured content names it with
// \udcff too. Before, each such byte became U+FFFD, and no client could
// name the file again.
func TestPathsNotUTF8InJSON(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is needed to read the documents as a client does")
	}
	b := newBinEnv(t)
	dir := filepath.Join(t.TempDir(), "proj\xffect")
	name := "bad\xffname.txt"
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{name: "one\n", "ok.txt": "fine\n"})
	check := func(what, doc string, want string, keys ...any) {
		t.Helper()
		if !utf8.ValidString(doc) || strings.ContainsRune(doc, utf8.RuneError) {
			t.Errorf("%s: the document is not clean UTF-8: %q", what, doc)
		}
		if got := fsencoded(t, python, doc, keys...); got != hex.EncodeToString([]byte(want)) {
			t.Errorf("%s: Python reads %v as %q, want %q\n%s", what, keys, got, want, doc)
		}
	}

	snap := b.ok("snapshot", dir, "--json", "--session", "s", "--turn", "t1").out
	check("snapshot --json", snap, dir, "project")
	if !strings.Contains(snap, `proj\udcffect`) {
		t.Errorf("snapshot --json: %s", snap)
	}
	writeFiles(t, dir, map[string]string{name: "two\n"})
	b.ok("snapshot", dir, "--session", "s", "--turn", "t1", "--end-turn")
	writeFiles(t, dir, map[string]string{name: "three\n"})

	diff := b.ok("diff", dir, "@2", "--json").out
	check("diff --json", diff, name, "files", 0, "path")
	if !strings.Contains(diff, `"bad\udcffname.txt"`) {
		t.Errorf("diff --json: %s", diff)
	}
	check("ls --json", b.ok("ls", dir, "@1", "--json").out, name, 0, "path")
	check("restore --dry-run --json", b.ok("restore", dir, "@2", "--dry-run", "--json").out, name, "changes", 0, "path")
	undo := b.ok("undo", dir, "--dry-run", "--json").out
	if !strings.Contains(undo, `"bad\udcffname.txt"`) {
		t.Errorf("undo --dry-run --json: %s", undo)
	}
	status := b.ok("status", "--json").out
	check("status --json", status, dir, "projects", 0, "workdir")
	for _, args := range [][]string{{"list", dir}, {"log", dir, name}, {"turns", dir}} {
		if out := b.ok(append(args, "--json")...).out; !strings.HasPrefix(out, "[{") {
			t.Errorf("%s --json: %s", args[0], out)
		}
	}

	// The MCP server: dir and path as a client that read them from the
	// documents above sends them back.
	jdir := strings.ReplaceAll(dir, "\xff", `\udcff`)
	content := mcpCall(t, b, "checkpoint_read_file", `{"dir":"`+jdir+`","snap":"@2","path":"bad\udcffname.txt"}`)
	if strings.Contains(content, `"isError":true`) || !strings.Contains(content, `"content":"one\n"`) ||
		!strings.Contains(content, `"structuredContent":{"path":"bad\udcffname.txt"`) {
		t.Errorf("checkpoint_read_file of %q: %s", name, content)
	}
	restore := mcpCall(t, b, "checkpoint_restore", `{"dir":"`+jdir+`","snap":"@2","paths":["bad\udcffname.txt"]}`)
	if strings.Contains(restore, `"isError":true`) || !strings.Contains(restore, `"changes":[{"path":"bad\udcffname.txt","action":"write"}]`) {
		t.Errorf("checkpoint_restore of %q: %s", name, restore)
	}
	history := mcpCall(t, b, "checkpoint_file_history", `{"dir":"`+jdir+`","path":"bad\udcffname.txt"}`)
	if strings.Contains(history, `"isError":true`) || strings.Count(history, `"short_id"`) < 2 {
		t.Errorf("checkpoint_file_history of %q: %s", name, history)
	}
}

// mcpCall runs the built binary's MCP server, calls tool with the JSON
// arguments args (written as they are) and returns the result's raw JSON.
// The server answers the call before it exits at the end of stdin.
func mcpCall(t *testing.T, b *binEnv, tool, args string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := b.commandContext(ctx, "mcp")
	c.Stdin = strings.NewReader(mcpLines(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)))
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s: casckpt mcp: %v", tool, err)
	}
	var msg struct{ Result, Error json.RawMessage }
	if err := json.Unmarshal(answers(t, bytes.NewReader(out))[2], &msg); err != nil {
		t.Fatalf("%s: no answer: %v\n%s", tool, err, out)
	}
	if msg.Error != nil {
		t.Fatalf("%s: %s", tool, msg.Error)
	}
	return string(msg.Result)
}

// TestHookPathsNotUTF8: a Claude Code hook event whose cwd and file_path
// name a byte that is not UTF-8 as \udcff is about that directory and
// file: the prompt's turn is recorded in it, the write is recorded, and
// nothing is logged as a failure.
func TestHookPathsNotUTF8(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj\xffect")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a\xff.txt": "one\n"})
	escaped := strings.ReplaceAll(dir, "\xff", `\udcff`)
	h := &hookSession{t: t, b: newBinEnv(t), cwd: escaped, session: "s1"}
	h.event("user_prompt_submit", map[string]string{"prompt": "edit a"})
	vars := map[string]string{"file": escaped + `/a\udcff.txt`, "content": "two"}
	h.event("pre_tool_use_write", vars)
	writeFiles(t, dir, map[string]string{"a\xff.txt": "two\n"})
	h.event("post_tool_use_write", vars)
	h.event("stop", nil)
	if log := h.hookLog(); len(log) != 1 || log[0] != "" {
		t.Errorf("hook.log: %q", log)
	}
	turns := turnsOf(t, h.b, dir)
	if len(turns) != 1 || turns[0]["end"] == nil || turns[0]["files_changed"] != 1.0 {
		t.Fatalf("turns of %q: %v", dir, turns)
	}
	writeFiles(t, dir, map[string]string{"a\xff.txt": "three\n"}) // not the agent's
	safe := h.b.ok("restore", dir, "@1", "--safe", "--dry-run", "--json").out
	if !strings.Contains(safe, `"kept":[{"path":"a\udcff.txt"`) {
		t.Errorf("restore --safe --dry-run: %s", safe)
	}
}
