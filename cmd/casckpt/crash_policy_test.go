package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// preparePolicy makes ready a run of policy on the loop's workflow
// project, a test workflow beside the project: a step of it is
// snapshotted first, then the run marks it running or completed at
// random (a prune then drops it at once).
func (l *crashLoop) preparePolicy(a crashAttempt) crashAttempt {
	if err := os.MkdirAll(l.workflow, 0o755); err != nil {
		l.t.Fatal(err)
	}
	step := fmt.Appendf(nil, `{"step": %d}`, l.rng.Uint64())
	if err := os.WriteFile(filepath.Join(l.workflow, "checkpoint.json"), step, 0o644); err != nil {
		l.t.Fatal(err)
	}
	l.mustRun("snapshot", l.workflow, "--keep", "10")
	a.lifecycleBefore = l.lifecycle()
	a.lifecycle = []string{"running", "completed"}[l.rng.IntN(2)]
	a.args = []string{"policy", l.workflow, "--test", "--lifecycle", a.lifecycle, "--json"}
	return a
}

// lifecycle is the workflow project's lifecycle ("" with none).
func (l *crashLoop) lifecycle() string {
	l.t.Helper()
	p := jsonOf[map[string]any](l.t, string(l.mustRun("policy", l.workflow, "--json")))
	s, _ := p["lifecycle"].(string)
	return s
}

// checkWorkflow checks the workflow project after run i of a policy or a
// prune. A finished policy set its lifecycle, a killed one left the old
// or the new. A finished prune dropped the completed test workflow whole,
// its policy with it, and kept a running one; a killed one did that or
// nothing. Either way the project and its policy go together.
func (l *crashLoop) checkWorkflow(i int, a crashAttempt, done bool) {
	t := l.t
	now := l.lifecycle()
	listed := len(listedIDs(t, l.mustRun("list", l.workflow, "--json")))
	switch {
	case a.op == "policy" && done && now != a.lifecycle,
		a.op == "policy" && now != a.lifecycle && now != a.lifecycleBefore:
		t.Fatalf("iteration %d: policy --lifecycle %s (finished %v) left the lifecycle %q, was %q", i, a.lifecycle, done, now, a.lifecycleBefore)
	case a.op != "prune":
	case a.lifecycleBefore == "completed" && done && (listed != 0 || now != ""):
		t.Fatalf("iteration %d: prune left %d snapshots of the completed test workflow, lifecycle %q", i, listed, now)
	case a.lifecycleBefore == "completed" && !done && (listed != 0 || now != "") && (listed == 0 || now != "completed"):
		t.Fatalf("iteration %d: a killed prune left %d snapshots of the completed test workflow (of %d), lifecycle %q", i, listed, a.listedWorkflow, now)
	case a.lifecycleBefore == "running" && (listed == 0 || now != "running"):
		t.Fatalf("iteration %d: prune (finished %v) dropped the running workflow: %d snapshots of %d, lifecycle %q", i, done, listed, a.listedWorkflow, now)
	}
}
