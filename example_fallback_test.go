package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/casckpt/casckpt"
)

// A workflow host checkpoints its state file after every step. The newest
// state was captured half written: with Fallback and CheckJSON, the host
// reads the newest state that parses (a damaged snapshot is passed over
// the same way).
func ExampleStore_CatWith() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "casckpt-example")
	defer os.RemoveAll(tmp)
	session := filepath.Join(tmp, "session")
	os.MkdirAll(session, 0o755)
	store, _ := casckpt.Open(filepath.Join(tmp, "store"), casckpt.Options{})
	var ids []casckpt.ID
	for _, state := range []string{`{"iteration": 1}`, `{"iteration": 2}`, `{"iteration": 3`} {
		os.WriteFile(filepath.Join(session, "checkpoint.json"), []byte(state), 0o644)
		res, _ := store.Snapshot(ctx, session, casckpt.SnapshotOptions{Keep: 10})
		ids = append(ids, res.ID)
	}

	var b strings.Builder
	res, err := store.CatWith(ctx, session, "@1", "checkpoint.json", &b, casckpt.CatOptions{Fallback: true, Check: casckpt.CheckJSON})
	fmt.Println(b.String(), err, res.ID == ids[1], len(res.Tried), res.Tried[0].ID == ids[2])
	fmt.Println(res.Tried[0].Reason)
	// Output:
	// {"iteration": 2} <nil> true 1 true
	// checkpoint.json does not parse as JSON: unexpected end of JSON input
}
