package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// workflowSteps is how many steps the workflow host of the size tests
// runs, and workflowKeep the history a host keeps (spec 191: 10).
const (
	workflowSteps = 15
	workflowKeep  = 10
)

// workflowHost runs casckpt as a workflow host of spec 191 does: a
// session directory whose checkpoint.json each step rewrites, snapshotted
// with --keep 10 after each step, at the time day sets (CASCKPT_NOW).
type workflowHost struct {
	t *testing.T
	b *binEnv
}

// newWorkflowHost returns a host with a store of its own, its clock at day 0.
func newWorkflowHost(t *testing.T) *workflowHost {
	h := &workflowHost{t: t, b: newBinEnv(t)}
	h.day(0)
	return h
}

// workflowStep is what one step's snapshot did: its --json document and
// the bytes of the pack files it added to the store.
type workflowStep struct {
	doc   map[string]any
	added int64
}

// day sets the clock to day n after 2026-03-01.
func (h *workflowHost) day(n int) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n)
	// Its steps count the pack files they add: none inline.
	h.b.extra = []string{"CASCKPT_NOW=" + at.Format(time.RFC3339), "CASCKPT_FILE_PACKS=1"}
}

// dir is the session directory of workflow name.
func (h *workflowHost) dir(name string) string {
	return filepath.Join(h.b.home, "sessions", name)
}

// session runs steps steps of workflow name, each with extra files
// besides checkpoint.json, and returns its session directory.
func (h *workflowHost) session(name string, steps int, extra func(step int) map[string]string) string {
	h.t.Helper()
	h.steps(name, steps, extra)
	return h.dir(name)
}

// steps runs steps 1 to steps of workflow name, each with extra files
// besides checkpoint.json, and returns what each step's snapshot did.
func (h *workflowHost) steps(name string, steps int, extra func(step int) map[string]string) []workflowStep {
	h.t.Helper()
	var done []workflowStep
	for n := 1; n <= steps; n++ {
		files := map[string]string{"checkpoint.json": workflowState(name, n)}
		if extra != nil {
			for k, v := range extra(n) {
				files[k] = v
			}
		}
		done = append(done, h.step(h.dir(name), n, files))
	}
	return done
}

// step is step n in session directory dir: files written, then
// `snapshot --keep 10 -m "step n"`, which must create a snapshot.
func (h *workflowHost) step(dir string, n int, files map[string]string) workflowStep {
	h.t.Helper()
	before := packSizes(h.t, h.b.store())
	writeFiles(h.t, dir, files)
	doc := jsonOf[map[string]any](h.t, h.b.ok("snapshot", dir, "--keep", fmt.Sprint(workflowKeep), "-m", fmt.Sprintf("step %d", n), "--json").out)
	if doc["created"] != true {
		h.t.Fatalf("step %d: no snapshot: %v", n, doc)
	}
	var added int64
	for name, size := range packSizes(h.t, h.b.store()) {
		if _, old := before[name]; !old {
			added += size
		}
	}
	return workflowStep{doc: doc, added: added}
}

// prune runs prune --json with args and returns its document.
func (h *workflowHost) prune(args ...string) map[string]any {
	h.t.Helper()
	return jsonOf[map[string]any](h.t, h.b.ok(append([]string{"prune", "--json"}, args...)...).out)
}

// snapshots is how many snapshots of dir the store lists.
func (h *workflowHost) snapshots(dir string) int {
	h.t.Helper()
	return len(listing(h.t, h.b, dir))
}

// workflowState is the checkpoint.json a workflow host writes after step
// n of workflow id, as prodigy's spec 191 has it: a counter, the steps
// done so far, a state object, variables (one key with a space), a total
// too precise for a float64, an error only step 5 recorded and a result
// from step 7 on.
func workflowState(id string, n int) string {
	var steps []string
	for i := range n {
		steps = append(steps, fmt.Sprintf(`    {"step_index": %d, "command": "claude /step-%d", "success": true, "output": null}`, i, i))
	}
	errorKey, result := "", "null"
	if n == 5 {
		errorKey = `  "error": {"step": 4, "message": "timeout, retried"},` + "\n"
	}
	if n >= 7 {
		result = `{"ok": true, "files": ["a.go", "b.go"]}`
	}
	return fmt.Sprintf(`{
  "workflow_id": %q,
  "iteration": %d,
%s  "execution_state": {"current_step_index": %d, "status": "Running", "updated": "2026-01-01T00:%02d:00Z"},
  "completed_steps": [
%s
  ],
  "variables": {"last output": "output of step %d", "budget_tokens": 9007199254740993},
  "precise_total": 1.%020d,
  "result": %s
}
`, id, n, errorKey, n, n, strings.Join(steps, ",\n"), n, n, result)
}

// packSizes returns the size of every pack file of the store, by name.
func packSizes(t *testing.T, store string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(filepath.Join(store, "packs"), func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(store, "packs") {
			return nil // no store yet
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".pack") {
			return err
		}
		info, err := d.Info()
		out[d.Name()] = info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sumSizes(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}
