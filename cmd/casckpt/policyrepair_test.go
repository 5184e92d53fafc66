package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPoliciesSurviveRepair: policies set through the binary (cleanup
// off, running, completed with its own retention, and one changed twice)
// come back from the packs when casckpt.db is deleted and repair rebuilds
// it: policy --json shows each as before, and a prune 40 days on keeps the
// projects with cleanup off and running, though stale, and drops the
// completed one by its rule.
func TestPoliciesSurviveRepair(t *testing.T) {
	h := newWorkflowHost(t)
	dirs := map[string]string{}
	for _, name := range []string{"debug", "running", "done", "twice"} {
		dirs[name] = h.session(name, 2, nil)
	}
	h.b.ok("policy", dirs["debug"], "--lifecycle", "failed", "--no-cleanup")
	h.b.ok("policy", dirs["running"], "--lifecycle", "running")
	h.b.ok("policy", dirs["done"], "--lifecycle", "completed", "--retention-days", "1")
	h.b.ok("policy", dirs["twice"], "--lifecycle", "completed", "--retention-days", "1")
	h.day(1)
	h.b.ok("policy", dirs["twice"], "--lifecycle", "running", "--no-cleanup")
	before := map[string]string{}
	for name, dir := range dirs {
		before[name] = h.b.ok("policy", dir, "--json").out
	}
	h.b.ok("gc")
	if err := os.Remove(filepath.Join(h.b.store(), "casckpt.db")); err != nil {
		t.Fatal(err)
	}
	h.b.ok("repair", "--json")
	for name, dir := range dirs {
		if got := h.b.ok("policy", dir, "--json").out; got != before[name] {
			t.Fatalf("policy of %s after repair:\n%s\nwant\n%s", name, got, before[name])
		}
	}
	h.day(40)
	deleted(t, h.prune(), map[string]int{"completed": 1})
	for name, dir := range dirs {
		if n, want := h.snapshots(dir), map[bool]int{true: 2}[name != "done"]; n != want {
			t.Fatalf("after the prune: %d snapshots of %s, want %d", n, name, want)
		}
	}
}
