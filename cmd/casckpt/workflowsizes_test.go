package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sizesHost runs workflowSteps steps of workflow wf-191 and returns the
// host, the session directory and, per step, the bytes of the pack files
// its snapshot added.
func sizesHost(t *testing.T) (*workflowHost, string, []int64) {
	t.Helper()
	h := newWorkflowHost(t)
	var added []int64
	for _, s := range h.steps("wf-191", workflowSteps, nil) {
		added = append(added, s.added)
	}
	return h, h.dir("wf-191"), added
}

// TestWorkflowHistoryBoundedAndReclaimed is spec 191's AC1-AC3 through the
// binary: the history holds the newest 10 steps, the oldest are gone, and
// a gc gives their space back (the packs on disk shrink to at most what
// the 10 kept snapshots added).
func TestWorkflowHistoryBoundedAndReclaimed(t *testing.T) {
	h, session, added := sizesHost(t)
	b := h.b
	list := jsonOf[[]map[string]any](t, b.ok("list", session, "--json").out)
	if len(list) != workflowKeep {
		t.Fatalf("history of %d steps, want the newest %d", len(list), workflowKeep)
	}
	for i, e := range list {
		if want := fmt.Sprintf("step %d", workflowSteps-i); e["reason"] != want {
			t.Fatalf("history entry %d is %v, want %s", i, e["reason"], want)
		}
	}
	before := sumSizes(packSizes(t, b.store()))
	var wrote int64
	for _, n := range added {
		wrote += n
	}
	if before != wrote {
		t.Fatalf("before gc the packs hold %d bytes, the steps wrote %d", before, wrote)
	}
	b.ok("gc")
	after := sumSizes(packSizes(t, b.store()))
	var kept int64
	for _, n := range added[workflowSteps-workflowKeep:] {
		kept += n
	}
	// At most what the kept steps wrote: gc may repack their small packs
	// into fewer, smaller ones.
	if after >= before || after > kept {
		t.Fatalf("gc left %d pack bytes of %d, want at most the %d that the %d kept steps wrote", after, before, kept, workflowKeep)
	}
	if got := b.ok("cat", session, "@1", "checkpoint.json").out; got != workflowState("wf-191", workflowSteps) {
		t.Fatalf("the newest state after gc: %q", got)
	}
	if got := b.ok("cat", session, "@10", "checkpoint.json").out; got != workflowState("wf-191", workflowSteps-workflowKeep+1) {
		t.Fatalf("the oldest kept state after gc: %q", got)
	}
}

// TestWorkflowHistoryListingSizes is spec 191's AC13 through the binary:
// list gives each step's tree size (the file's size on disk), what it
// added to the store (the bytes of the packs its snapshot wrote) and the
// plain size of that, whose ratio the text shows; status gives the
// project's tree size and what its snapshots hold.
func TestWorkflowHistoryListingSizes(t *testing.T) {
	h, session, added := sizesHost(t)
	b := h.b
	list := jsonOf[[]map[string]any](t, b.ok("list", session, "--json").out)
	var stored float64
	for i, e := range list {
		step := workflowSteps - i
		if want := float64(len(workflowState("wf-191", step))); e["bytes"] != want {
			t.Errorf("step %d: bytes %v, want the file's %v", step, e["bytes"], want)
		}
		if want := float64(added[step-1]); e["added_bytes"] != want || want == 0 {
			t.Errorf("step %d: added_bytes %v, want the %v bytes of the packs it wrote", step, e["added_bytes"], want)
		}
		raw, _ := e["added_raw_bytes"].(float64)
		if raw <= float64(len(workflowState("wf-191", step))) || raw < e["added_bytes"].(float64) {
			t.Errorf("step %d: added_raw_bytes %v: less than the new file (%d bytes) or than its compressed form", step, raw, len(workflowState("wf-191", step)))
		}
		stored += e["added_bytes"].(float64)
	}
	st := jsonOf[map[string]any](t, b.ok("status", "--json").out)
	projects := st["projects"].([]any)
	if len(projects) != 1 {
		t.Fatalf("status projects: %v", projects)
	}
	p := projects[0].(map[string]any)
	if p["bytes"] != float64(len(workflowState("wf-191", workflowSteps))) || p["stored_bytes"] != stored || p["stored_raw_bytes"].(float64) <= stored {
		t.Fatalf("status project %v, want bytes %d and stored_bytes %v", p, len(workflowState("wf-191", workflowSteps)), stored)
	}
	text := b.ok("list", session).out
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if !strings.Contains(lines[0], "SIZE") || !strings.Contains(lines[0], "ADDED") || !strings.Contains(lines[0], "RATIO") {
		t.Fatalf("list header: %q", lines[0])
	}
	newest := list[0]
	want := []string{humanBytes(int64(newest["bytes"].(float64))), humanBytes(int64(newest["added_bytes"].(float64))),
		ratio(int64(newest["added_raw_bytes"].(float64)), int64(newest["added_bytes"].(float64)))}
	for _, w := range want {
		if !strings.Contains(lines[1], w) {
			t.Errorf("list line %q lacks %q", lines[1], w)
		}
	}
	if r := ratio(int64(p["stored_raw_bytes"].(float64)), int64(stored)); !strings.Contains(b.ok("status").out, r) || !strings.HasSuffix(r, "x") {
		t.Errorf("status text lacks the ratio %s", r)
	}
}

// TestWorkflowExportOneState is spec 191's AC15 through the binary: one
// step's state exported as a tar archive holds that step's checkpoint.json,
// byte for byte.
func TestWorkflowExportOneState(t *testing.T) {
	h, session, _ := sizesHost(t)
	b := h.b
	out := filepath.Join(t.TempDir(), "step12.tar")
	b.ok("export", session, "@4", "-o", out) // @4: the fourth newest, step 12
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name], _ = io.ReadAll(tr)
		}
	}
	if len(files) != 1 || !bytes.Equal(files["checkpoint.json"], []byte(workflowState("wf-191", workflowSteps-3))) {
		t.Fatalf("archive of step %d holds %d files, checkpoint.json %q", workflowSteps-3, len(files), files["checkpoint.json"])
	}
}
