package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestWorkflowStructuredDiff is spec 191's AC14, as a workflow host runs
// it: checkpoint.json rewritten each step, snapshot --keep 10 after each,
// then the structured diff of two steps.
func TestWorkflowStructuredDiff(t *testing.T) {
	h := newWorkflowHost(t)
	b, session := h.b, h.session("wf-42", 12, nil)
	// Step 5 is #5 and step 7 #7 (#1 and #2 were dropped by --keep 10).
	if list := jsonOf[[]map[string]any](t, b.ok("list", session, "--json").out); len(list) != 10 || list[9]["number"] != 3.0 {
		t.Fatalf("history of 12 steps with --keep 10: %v", list)
	}
	doc := jsonOf[diffDoc](t, b.ok("diff", session, "#5", "#7", "--json").out)
	if len(doc.Files) != 1 || doc.Files[0].Path != "checkpoint.json" || doc.Files[0].Status != "modified" {
		t.Fatalf("diff of two steps: %+v", doc.Files)
	}
	step := func(i int) string {
		return fmt.Sprintf(`{"step_index":%d,"command":"claude /step-%d","success":true,"output":null}`, i, i)
	}
	want := strings.Join([]string{
		"added $.completed_steps[5] - " + step(5),
		"added $.completed_steps[6] - " + step(6),
		`removed $.error {"step":4,"message":"timeout, retried"} -`,
		"changed $.execution_state.current_step_index 5 7",
		`changed $.execution_state.updated "2026-01-01T00:05:00Z" "2026-01-01T00:07:00Z"`,
		"changed $.iteration 5 7",
		"changed $.precise_total 1.00000000000000000005 1.00000000000000000007",
		`changed $.result null {"ok":true,"files":["a.go","b.go"]}`,
		`changed $.variables["last output"] "output of step 5" "output of step 7"`,
	}, "\n") + "\n"
	if got := changeLines(t, doc, "checkpoint.json"); got != want {
		t.Fatalf("json_changes from step 5 to step 7:\n%s\nwant\n%s", got, want)
	}
	// Backwards, the same paths with the ops and values reversed.
	back := changeLines(t, jsonOf[diffDoc](t, b.ok("diff", session, "#7", "#5", "--json").out), "checkpoint.json")
	if !strings.HasPrefix(back, "removed $.completed_steps[5] "+step(5)+" -\n") || !strings.Contains(back, "changed $.iteration 7 5\n") ||
		!strings.Contains(back, `added $.error - {"step":4,"message":"timeout, retried"}`) {
		t.Fatalf("json_changes from step 7 to step 5:\n%s", back)
	}
	// For people: the same changes, long values shortened.
	text := b.ok("diff", session, "#5", "#7", "--semantic").out
	wantText := `diff --git a/checkpoint.json b/checkpoint.json
+ $.completed_steps[5]: {...}
+ $.completed_steps[6]: {...}
- $.error: {"step":4,"message":"timeout, retried"}
~ $.execution_state.current_step_index: 5 → 7
~ $.execution_state.updated: "2026-01-01T00:05:00Z" → "2026-01-01T00:07:00Z"
~ $.iteration: 5 → 7
~ $.precise_total: 1.00000000000000000005 → 1.00000000000000000007
~ $.result: null → {"ok":true,"files":["a.go","b.go"]}
~ $.variables["last output"]: "output of step 5" → "output of step 7"
`
	if text != wantText {
		t.Fatalf("diff --semantic:\n%s\nwant\n%s", text, wantText)
	}
	// From the newest step to the working tree, rewritten once more.
	writeFiles(t, session, map[string]string{"checkpoint.json": workflowState("wf-42", 13)})
	if got := changeLines(t, jsonOf[diffDoc](t, b.ok("diff", session, "@1", "--json").out), "checkpoint.json"); !strings.Contains(got, "changed $.iteration 12 13\n") {
		t.Fatalf("json_changes from the newest step to the working tree:\n%s", got)
	}
}
