package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// deleted checks the deleted_* counts of prune document doc: want names
// the rules that dropped a project; every other count is 0.
func deleted(t *testing.T, doc map[string]any, want map[string]int) {
	t.Helper()
	for _, rule := range []string{"orphan", "stale", "completed", "failed", "test"} {
		if got := doc["deleted_"+rule]; got != float64(want[rule]) {
			t.Errorf("deleted_%s = %v, want %d (%v)", rule, got, want[rule], doc)
		}
	}
}

// TestWorkflowCompletedDroppedAfterSevenDays (spec 191 AC7): a completed
// workflow's checkpoints are kept 7 days after it completed and dropped by
// the first prune after; --dry-run names each drop with its rule.
func TestWorkflowCompletedDroppedAfterSevenDays(t *testing.T) {
	h := newWorkflowHost(t)
	dir := h.session("done", 3, nil)
	doc := jsonOf[map[string]any](t, h.b.ok("policy", dir, "--lifecycle", "completed", "--json").out)
	if want := []string{"cleanup", "keep", "lifecycle", "lifecycle_since", "project", "retention_days", "test"}; !slices.Equal(keys(doc), want) {
		t.Fatalf("policy keys %v, want %v", keys(doc), want)
	}
	if doc["lifecycle"] != "completed" || doc["lifecycle_since"] != "2026-03-01T00:00:00Z" || doc["test"] != false ||
		doc["cleanup"] != true || doc["keep"] != nil || doc["retention_days"] != nil || doc["project"] != dir {
		t.Fatalf("policy: %v", doc)
	}
	h.day(6)
	deleted(t, h.prune(), nil)
	if n := h.snapshots(dir); n != 3 {
		t.Fatalf("6 days after completion %d snapshots are left, want 3", n)
	}
	h.day(8)
	dry := h.prune("--dry-run")
	drops := dry["drops"].([]any)
	if len(drops) != 3 || drops[0].(map[string]any)["rule"] != "completed" || drops[0].(map[string]any)["project"] != dir {
		t.Fatalf("dry run drops %v, want the 3 snapshots of %s by rule completed", drops, dir)
	}
	if text := h.b.ok("prune", "--dry-run").out; !strings.Contains(text, "(completed: ") || !strings.Contains(text, "1 completed project") {
		t.Fatalf("the dry run's text does not name the rule:\n%s", text)
	}
	if n := h.snapshots(dir); n != 3 {
		t.Fatalf("the dry run dropped snapshots: %d left", n)
	}
	done := h.prune()
	deleted(t, done, map[string]int{"completed": 1})
	if done["snapshots_dropped"] != 3.0 || done["bytes_freed"].(float64) <= 0 {
		t.Fatalf("prune: %v", done)
	}
	if n := h.snapshots(dir); n != 0 {
		t.Fatalf("8 days after completion %d snapshots are left", n)
	}
	if st := jsonOf[map[string]any](t, h.b.ok("status", "--json").out); len(st["projects"].([]any)) != 0 {
		t.Fatalf("status still lists the project: %v", st["projects"])
	}
	h.b.ok("verify")
}

// TestWorkflowFailedKeptThirtyDays (spec 191 AC8): a failed workflow's
// checkpoints are kept 30 days, though the stale rule drops a project
// without lifecycle untouched as long; then dropped.
func TestWorkflowFailedKeptThirtyDays(t *testing.T) {
	h := newWorkflowHost(t)
	failed := h.session("failed", 3, nil)
	plain := h.session("plain", 1, nil)
	h.b.ok("policy", failed, "--lifecycle", "failed")
	h.day(29)
	deleted(t, h.prune(), map[string]int{"stale": 1})
	if n, p := h.snapshots(failed), h.snapshots(plain); n != 3 || p != 0 {
		t.Fatalf("after 29 days: %d snapshots of the failed workflow (want 3), %d of the stale project (want 0)", n, p)
	}
	h.day(31)
	deleted(t, h.prune(), map[string]int{"failed": 1})
	if n := h.snapshots(failed); n != 0 {
		t.Fatalf("31 days after failure %d snapshots are left", n)
	}
}

// TestWorkflowRunningKept (spec 191 AC9): a running workflow is never
// dropped: not as stale after a year, not as an orphan once its session
// directory is deleted, while an orphan without lifecycle is.
func TestWorkflowRunningKept(t *testing.T) {
	h := newWorkflowHost(t)
	running := h.session("running", 3, nil)
	h.b.ok("policy", running, "--lifecycle", "running")
	h.day(400)
	gone := h.session("gone", 1, nil)
	deleted(t, h.prune(), map[string]int{})
	for _, d := range []string{running, gone} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	st := jsonOf[map[string]any](t, h.b.ok("status", "--json").out)
	for _, p := range st["projects"].([]any) {
		if p := p.(map[string]any); p["workdir"] == running && (p["state"] != "orphan" || p["lifecycle"] != "running" || p["test"] != false) {
			t.Fatalf("status of the deleted running workflow: %v", p)
		}
	}
	deleted(t, h.prune(), map[string]int{"orphan": 1})
	if n := h.snapshots(running); n != 3 {
		t.Fatalf("the running workflow has %d snapshots after prune, want 3", n)
	}
}

// TestWorkflowRetentionPerProject (spec 191 AC10-AC11): a workflow's own
// retention days (1 and 30) override the global default of 7.
func TestWorkflowRetentionPerProject(t *testing.T) {
	h := newWorkflowHost(t)
	short, long, normal := h.session("short", 2, nil), h.session("long", 2, nil), h.session("normal", 2, nil)
	h.b.ok("policy", short, "--lifecycle", "completed", "--retention-days", "1")
	h.b.ok("policy", long, "--lifecycle", "completed", "--retention-days", "30")
	h.b.ok("policy", normal, "--lifecycle", "completed")
	left := func() []int { return []int{h.snapshots(short), h.snapshots(long), h.snapshots(normal)} }
	for _, step := range []struct {
		day     int
		deleted int
		left    []int
	}{{1, 0, []int{2, 2, 2}}, {2, 1, []int{0, 2, 2}}, {8, 1, []int{0, 2, 0}}, {30, 0, []int{0, 2, 0}}, {31, 1, []int{0, 0, 0}}} {
		h.day(step.day)
		deleted(t, h.prune("--completed-days", "7"), map[string]int{"completed": step.deleted})
		if got := left(); !slices.Equal(got, step.left) {
			t.Fatalf("day %d: snapshots of short, long, normal %v, want %v", step.day, got, step.left)
		}
	}
}

// TestWorkflowCleanupOff: a workflow with cleanup off keeps every
// checkpoint: past --keep 10, past its days, and through the size cap,
// which counts it and drops from the other project instead.
func TestWorkflowCleanupOff(t *testing.T) {
	h := newWorkflowHost(t)
	blob := func(int) map[string]string {
		b := make([]byte, 400<<10)
		rand.Read(b) // random: stored as it is
		return map[string]string{"state.bin": string(b)}
	}
	debug := h.dir("debug")
	if err := os.MkdirAll(debug, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := jsonOf[map[string]any](t, h.b.ok("policy", debug, "--lifecycle", "completed", "--no-cleanup", "--json").out)
	if doc["cleanup"] != false {
		t.Fatalf("policy --no-cleanup: %v", doc)
	}
	h.session("debug", 12, nil)
	if n := h.snapshots(debug); n != 12 {
		t.Fatalf("--keep 10 dropped checkpoints of a workflow with cleanup off: %d left", n)
	}
	big := h.dir("big")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	h.b.ok("policy", big, "--keep", "4") // not ten: the cap's arithmetic below counts four
	h.day(1)
	h.session("debug", 4, blob) // 4 x 400 KiB, older than big's
	h.session("big", 4, blob)   // 4 x 400 KiB
	if n := h.snapshots(big); n != 4 {
		t.Fatalf("big has %d snapshots, want 4", n)
	}
	doc = h.prune("--max-size-mb", "3")
	deleted(t, doc, nil)
	drops := doc["drops"].([]any)
	if len(drops) == 0 {
		t.Fatalf("the size cap dropped nothing: %v", doc)
	}
	for _, d := range drops {
		if d := d.(map[string]any); d["project"] != big || d["rule"] != "size-cap" {
			t.Fatalf("the cap dropped %v, want only big's snapshots", d)
		}
	}
	if n, b := h.snapshots(debug), h.snapshots(big); n != 16 || b == 0 || b == 4 {
		t.Fatalf("after the cap: %d snapshots of debug (want all 16), %d of big (want some, not all, of 4)", n, b)
	}
	h.day(100)
	h.b.ok("policy", debug, "--cleanup")
	deleted(t, h.prune(), map[string]int{"completed": 1, "stale": 1})
}

// TestWorkflowTestDroppedAtOnce (spec 191 AC12): a test workflow is kept
// while it runs and dropped by the first prune after it completes.
func TestWorkflowTestDroppedAtOnce(t *testing.T) {
	h := newWorkflowHost(t)
	dir := h.session("test-run", 3, nil)
	h.b.ok("policy", dir, "--test", "--lifecycle", "running")
	deleted(t, h.prune(), nil)
	h.b.ok("policy", dir, "--lifecycle", "completed")
	doc := h.prune()
	deleted(t, doc, map[string]int{"test": 1})
	if drops := doc["drops"].([]any); len(drops) != 3 || drops[0].(map[string]any)["rule"] != "test" {
		t.Fatalf("drops %v, want 3 by rule test", drops)
	}
	if n := h.snapshots(dir); n != 0 {
		t.Fatalf("%d snapshots of the finished test workflow are left", n)
	}
}

// TestPolicyCommand: policy changes only what its flags name and with
// none prints the policy without recording anything; a subdirectory is
// its project (--here: a project of its own); a project's --keep
// is the keep rule of a snapshot that names none; status shows lifecycle
// and test; a bad lifecycle is a usage error and a DIR that is no
// directory a refusal.
func TestPolicyCommand(t *testing.T) {
	h := newWorkflowHost(t)
	dir := h.dir("w")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := jsonOf[map[string]any](t, h.b.ok("policy", dir, "--json").out)
	if doc["lifecycle"] != nil || doc["lifecycle_since"] != nil || doc["test"] != false || doc["cleanup"] != true || doc["keep"] != nil {
		t.Fatalf("the default policy: %v", doc)
	}
	if st := jsonOf[map[string]any](t, h.b.ok("status", "--json").out); len(st["projects"].([]any)) != 0 {
		t.Fatalf("policy without flags recorded the project: %v", st["projects"])
	}
	h.b.ok("policy", dir, "--test", "--keep", "3")
	h.day(2)
	doc = jsonOf[map[string]any](t, h.b.ok("policy", dir, "--lifecycle", "running", "--retention-days", "2", "--json").out)
	if doc["test"] != true || doc["keep"] != 3.0 || doc["retention_days"] != 2.0 || doc["lifecycle"] != "running" || doc["lifecycle_since"] != "2026-03-03T00:00:00Z" {
		t.Fatalf("a change of lifecycle and days changed more: %v", doc)
	}
	h.day(3)
	if doc = jsonOf[map[string]any](t, h.b.ok("policy", dir, "--lifecycle", "running", "--no-test", "--keep", "0", "--json").out); doc["lifecycle_since"] != "2026-03-03T00:00:00Z" || doc["test"] != false || doc["keep"] != nil {
		t.Fatalf("the same lifecycle again moved its time, or --no-test, --keep 0 did not apply: %v", doc)
	}
	h.b.ok("policy", dir, "--keep", "3")
	for i := range 5 {
		writeFiles(t, dir, map[string]string{"checkpoint.json": fmt.Sprint(i)})
		h.b.ok("snapshot", dir)
	}
	if n := h.snapshots(dir); n != 3 {
		t.Fatalf("the project's --keep 3 kept %d snapshots", n)
	}
	writeFiles(t, dir, map[string]string{"checkpoint.json": "named"})
	h.b.ok("snapshot", dir, "--keep", "5")
	if n := h.snapshots(dir); n != 4 {
		t.Fatalf("a snapshot's own --keep 5 left %d snapshots, want 4", n)
	}
	h.b.ok("policy", dir, "--test")
	text := h.b.ok("status").out
	if !strings.Contains(text, "live, running, test") {
		t.Fatalf("status text lacks the lifecycle:\n%s", text)
	}
	if text := h.b.ok("policy", dir).out; !strings.Contains(text, "running since 2026-03-03T00:00:00Z, test, retention 2 days, keep 3, cleanup on") {
		t.Fatalf("policy text: %s", text)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if doc := jsonOf[map[string]any](t, h.b.ok("policy", sub, "--json").out); doc["project"] != dir || doc["lifecycle"] != "running" {
		t.Fatalf("policy of a subdirectory is not its project's: %v", doc)
	}
	if doc := jsonOf[map[string]any](t, h.b.ok("policy", sub, "--here", "--lifecycle", "failed", "--json").out); doc["project"] != sub || doc["lifecycle"] != "failed" {
		t.Fatalf("policy --here of a subdirectory: %v", doc)
	}
	failsWith(t, h.b.run("policy", dir, "--lifecycle", "paused"), 2, "--lifecycle takes running, completed or failed")
	failsWith(t, h.b.run("policy", dir, "--test", "--no-test"), 2, "--test and --no-test exclude each other")
	file := filepath.Join(dir, "checkpoint.json")
	failsWith(t, h.b.run("policy", file, "--lifecycle", "running"), 1, "not a directory")
	failsWith(t, h.b.run("policy", filepath.Join(dir, "missing"), "--lifecycle", "running"), 1, "")
}
