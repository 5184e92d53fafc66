//go:build !casckpt_lean

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// TestMCPFallback checks fallback (and check) on checkpoint_read_file and
// checkpoint_restore: with the newest checkpoint's data damaged and a
// newer one that does not parse, the tools pass over them, name them in
// tried, and give (or write) the newest intact copy; without fallback they
// fail.
func TestMCPFallback(t *testing.T) {
	e := newEnv(t).filePacks() // it loses or damages pack files, or the database
	dir := t.TempDir()
	packs := func() []string { p, _ := filepath.Glob(filepath.Join(e.store, "packs", "*.pack")); return p }
	cs := mcpSession(t, e)
	var ids []string
	var damaged []string
	for i, state := range []string{`{"step": 1}`, `{"step": 2}`, `{"step": 3`} {
		before := packs()
		writeFiles(t, dir, map[string]string{"state.json": state})
		c, isErr, text := callTool[mcp.CreateOutput](t, cs, "checkpoint_create", map[string]any{"dir": dir})
		if isErr || c.ID == nil {
			t.Fatalf("checkpoint_create %d: %s", i+1, text)
		}
		ids = append(ids, *c.ID)
		if i == 1 {
			for _, p := range packs() {
				if !slices.Contains(before, p) {
					damaged = append(damaged, p)
				}
			}
		}
	}
	if len(damaged) == 0 {
		t.Fatal("the second checkpoint wrote no pack")
	}
	for _, p := range damaged {
		junkFile(t, p)
	}

	if _, isErr, _ := callTool[mcp.ReadFileOutput](t, cs, "checkpoint_read_file", map[string]any{"dir": dir, "snap": "@2", "path": "state.json"}); !isErr {
		t.Fatal("checkpoint_read_file of the damaged checkpoint without fallback succeeded")
	}
	read, isErr, text := callTool[mcp.ReadFileOutput](t, cs, "checkpoint_read_file",
		map[string]any{"dir": dir, "snap": "@1", "path": "state.json", "fallback": true, "check": "json"})
	if isErr || read.ID != ids[0] || read.Content == nil || *read.Content != `{"step": 1}` || text != `{"step": 1}` ||
		len(read.Tried) != 2 || read.Tried[0].ID != ids[2] || !strings.Contains(read.Tried[0].Reason, "does not parse as JSON") ||
		read.Tried[1].ID != ids[1] || !strings.HasPrefix(read.Tried[1].Reason, "damaged: ") {
		t.Fatalf("checkpoint_read_file with fallback and check json: %+v %q", read, text)
	}

	if _, isErr, _ := callTool[mcp.RestoreOutput](t, cs, "checkpoint_restore", map[string]any{"dir": dir, "snap": "@2", "dry_run": false}); !isErr {
		t.Fatal("checkpoint_restore of the damaged checkpoint without fallback succeeded")
	}
	res, isErr, text := callTool[mcp.RestoreOutput](t, cs, "checkpoint_restore", map[string]any{"dir": dir, "snap": "@2", "dry_run": false, "fallback": true})
	if isErr || res.RestoredTo != ids[0] || res.Tried == nil || len(*res.Tried) != 1 || (*res.Tried)[0].ID != ids[1] {
		t.Fatalf("checkpoint_restore with fallback: %+v %s", res, text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "state.json")); string(b) != `{"step": 1}` {
		t.Fatalf("state.json after the fallback restore: %q", b)
	}
}
