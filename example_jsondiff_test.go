package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt"
)

// A workflow host rewrites its state file each step; Diff with JSON says
// which values changed between two steps, key by key.
func ExampleStore_Diff_json() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	session := filepath.Join(tmp, "session")
	os.MkdirAll(session, 0o755)
	state := filepath.Join(session, "checkpoint.json")
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})

	os.WriteFile(state, []byte(`{"iteration": 5, "steps": ["plan"], "error": "timeout"}`), 0o644)
	step5, _ := store.Snapshot(ctx, session, casckpt.SnapshotOptions{Reason: "step 5"})
	os.WriteFile(state, []byte(`{"iteration": 7, "steps": ["plan", {"name": "test"}]}`), 0o644)
	step7, _ := store.Snapshot(ctx, session, casckpt.SnapshotOptions{Reason: "step 7"})

	res, _ := store.Diff(ctx, session, casckpt.Ref(step5.ID.String()), casckpt.DiffOptions{To: casckpt.Ref(step7.ID.String()), JSON: true})
	for _, c := range res.Files[0].JSON {
		line := c.Op + " " + c.Path
		if c.From != nil {
			line += " from " + string(c.From)
		}
		if c.To != nil {
			line += " to " + string(c.To)
		}
		fmt.Println(line)
	}
	// Output:
	// removed $.error from "timeout"
	// changed $.iteration from 5 to 7
	// added $.steps[1] to {"name":"test"}
}
