package main

import (
	"context"
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
