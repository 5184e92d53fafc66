package main

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/jsonapi"
)

// TestForgetDryRun: forget --dry-run changes nothing and names each
// snapshot with its pin, turn and the bytes no other snapshot holds; the
// real forget drops a pinned snapshot too and leaves the bytes null.
func TestForgetDryRun(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"keep.txt": "kept by all\n"})
	e.ok("snapshot", dir)
	noise := make([]byte, 30000) // incompressible: its chunks stay about as large stored
	rand.New(rand.NewSource(1)).Read(noise)
	writeFiles(t, dir, map[string]string{"only.txt": string(noise)})
	e.ok("snapshot", dir, "--session", "s1", "--turn", "t1")
	e.ok("pin", dir, "#2")
	writeFiles(t, dir, map[string]string{"keep.txt": "changed\n"})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"keep.txt": "kept by all\n"})
	e.ok("snapshot", dir) // #4: the same tree as #2
	before := e.ok("list", dir, "--json").out

	dry := jsonOf[jsonapi.Forget](t, e.ok("forget", dir, "#2", "--dry-run", "--json").out)
	if !dry.DryRun || len(dry.Forgotten) != 1 || len(dry.Snapshots) != 1 || dry.FreesBytes == nil || *dry.FreesBytes != 0 {
		t.Fatalf("dry run document: %+v", dry)
	}
	two := dry.Snapshots[0]
	if two.ID != dry.Forgotten[0] || two.Number != 2 || !two.Pinned || two.Turn == nil || *two.Turn != "t1" || two.AloneBytes == nil || *two.AloneBytes != 0 {
		t.Fatalf("#2 shares its tree with #4, so it alone holds nothing: %+v", two)
	}
	all := jsonOf[jsonapi.Forget](t, e.ok("forget", dir, "#2", "#3", "#4", "#2", "--dry-run", "--json").out)
	if len(all.Forgotten) != 3 || *all.Snapshots[1].AloneBytes <= 0 || *all.FreesBytes < int64(len(noise)) {
		t.Fatalf("#2 to #4 hold only.txt between them: %+v", all)
	}
	one := jsonOf[jsonapi.Forget](t, e.ok("forget", dir, "#1", "--dry-run", "--json").out)
	if *one.Snapshots[0].AloneBytes <= 0 || *one.FreesBytes != *one.Snapshots[0].AloneBytes {
		t.Fatalf("#1's root tree is its own: %+v", one)
	}
	if human := e.ok("forget", dir, "#2", "--dry-run").out; !strings.Contains(human, "would forget") || !strings.Contains(human, "(pinned)") {
		t.Fatalf("human dry run: %q", human)
	}
	if after := e.ok("list", dir, "--json").out; after != before {
		t.Fatalf("a dry run changed the list:\n%s\n%s", before, after)
	}

	done := jsonOf[jsonapi.Forget](t, e.ok("forget", dir, "#2", "--json").out)
	if done.DryRun || len(done.Forgotten) != 1 || done.Forgotten[0] != two.ID || !done.Snapshots[0].Pinned ||
		done.Snapshots[0].AloneBytes != nil || done.FreesBytes != nil {
		t.Fatalf("forget of the pinned #2: %+v", done)
	}
	if list := jsonOf[[]jsonapi.ListItem](t, e.ok("list", dir, "--json").out); len(list) != 3 {
		t.Fatalf("after forget: %d snapshots, want 3", len(list))
	}
}
