package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
