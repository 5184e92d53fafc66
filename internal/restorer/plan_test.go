package restorer

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/manifest"
)

func file(size int64) manifest.Entry { return manifest.Entry{Kind: manifest.KindFile, Size: size} }
func link() manifest.Entry           { return manifest.Entry{Kind: manifest.KindSymlink, Target: "t", Size: 1} }
func dir() manifest.Entry            { return manifest.Entry{Kind: manifest.KindDir} }

func added(p string, e manifest.Entry) manifest.Change {
	return manifest.Change{Path: p, Status: manifest.Added, New: e}
}

func deleted(p string, e manifest.Entry) manifest.Change {
	return manifest.Change{Path: p, Status: manifest.Deleted, Old: e}
}

func modified(p string, old, new manifest.Entry) manifest.Change {
	return manifest.Change{Path: p, Status: manifest.Modified, Old: old, New: new}
}

func typeChanged(p string, old, new manifest.Entry) manifest.Change {
	return manifest.Change{Path: p, Status: manifest.TypeChanged, Old: old, New: new}
}

func paths(cs []manifest.Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

func TestNewPlan(t *testing.T) {
	all := []manifest.Change{
		added("d", dir()), added("d/a", file(3)), added("d/l", link()),
		modified("m", file(5), file(7)),
		deleted("x", dir()), deleted("x/y", dir()), deleted("x/y/z", file(1)),
		typeChanged("f2d", file(1), dir()), added("f2d/in", file(11)),
	}
	excludedDirs := map[string]bool{"cache": true, "node_modules": true, "tmp": true}
	isDir := func(p string) bool { return excludedDirs[p] }
	for _, tc := range []struct {
		name              string
		changes           []manifest.Change
		paths, excluded   []string
		plan, skipped     []string
		written, deletedN int
		bytes             int64
	}{{
		name: "everything", changes: all,
		plan:    []string{"d", "d/a", "d/l", "m", "x", "x/y", "x/y/z", "f2d", "f2d/in"},
		written: 4, deletedN: 1, bytes: 3 + 7 + 11, // files only
	}, {
		name: "paths, with the directories above them", changes: all, paths: []string{"d/a", "x/y/z", "f2d/in"},
		plan:    []string{"d", "d/a", "x/y/z", "f2d", "f2d/in"},
		written: 2, deletedN: 1, bytes: 3 + 11,
	}, {
		name:     "a path the target holds is restored though excluded now",
		changes:  []manifest.Change{added("big.bin", file(100)), added("node_modules", dir()), added("node_modules/x", file(1))},
		excluded: []string{"big.bin", "node_modules"},
		plan:     []string{"big.bin", "node_modules", "node_modules/x"}, written: 2, bytes: 101,
	}, {
		name:    "an excluded entry of the other kind is in the way",
		changes: []manifest.Change{added("cache", file(1)), added("a", file(2))}, excluded: []string{"cache"},
		plan: []string{"a"}, skipped: []string{"cache"}, written: 1, bytes: 2,
	}, {
		name: "a directory to replace holds excluded entries",
		changes: []manifest.Change{
			typeChanged("out", dir(), file(4)), deleted("out/a.txt", file(1)), deleted("other", file(1)),
		},
		excluded: []string{"out/gen.log"},
		plan:     []string{"other"}, skipped: []string{"out", "out/a.txt"}, deletedN: 1,
	}, {
		name:     "nothing at or under an excluded path is deleted",
		changes:  []manifest.Change{deleted("tmp/kept.txt", file(1)), deleted("tmp2", file(1))},
		excluded: []string{"tmp"},
		plan:     []string{"tmp2"}, skipped: []string{"tmp/kept.txt"}, deletedN: 1,
	}, {
		name: "no changes",
		plan: []string{}, skipped: []string{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlan(tc.changes, tc.paths, tc.excluded, isDir)
			if tc.skipped == nil {
				tc.skipped = []string{}
			}
			if got := paths(p.Changes); !slices.Equal(got, tc.plan) {
				t.Errorf("plan %q, want %q", got, tc.plan)
			}
			if p.Changes == nil || p.Skipped == nil {
				t.Errorf("nil slices: %#v", p)
			}
			if !slices.Equal(p.Skipped, tc.skipped) {
				t.Errorf("skipped %q, want %q", p.Skipped, tc.skipped)
			}
			if p.Written != tc.written || p.Deleted != tc.deletedN || p.Bytes != tc.bytes {
				t.Errorf("%d written, %d deleted, %d bytes; want %d, %d, %d", p.Written, p.Deleted, p.Bytes, tc.written, tc.deletedN, tc.bytes)
			}
		})
	}
}

func TestPlanTree(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	s := spec{"b/c/d.txt": {Data: "hello"}, "a": {Link: "b"}, "b/e": {Data: "xyz", Exec: true}, "z": {Dir: true}}
	root := putTree(t, m, s)
	p, err := PlanTree(ctx, m, root)
	if err != nil {
		t.Fatal(err)
	}
	var walked []string
	err = manifest.Walk(ctx, m, root, func(p string, _ manifest.Entry) error {
		walked = append(walked, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(p.Changes), []string{"a", "b", "b/c", "b/c/d.txt", "b/e", "z"}; !slices.Equal(got, want) || !slices.Equal(got, walked) {
		t.Fatalf("plan %q, want %q, as Walk visits them (%q)", got, want, walked)
	}
	for _, c := range p.Changes {
		if c.Status != manifest.Added {
			t.Errorf("%s: %s", c.Path, c.Status)
		}
	}
	if p.Written != 3 || p.Deleted != 0 || p.Bytes != 8 || len(p.Skipped) != 0 {
		t.Errorf("counts %+v", p)
	}

	sub, err := manifest.Lookup(ctx, m, root, "b/c")
	if err != nil {
		t.Fatal(err)
	}
	m.Delete(sub.Tree)
	if _, err := PlanTree(ctx, m, root); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("a tree missing below the root: %v", err)
	}
}

// countingGetter counts the reads of each object.
type countingGetter struct {
	cas.Getter
	mu    sync.Mutex
	reads map[cas.ID]int
}

func (g *countingGetter) Get(ctx context.Context, id cas.ID) ([]byte, error) {
	g.mu.Lock()
	g.reads[id]++
	g.mu.Unlock()
	return g.Getter.Get(ctx, id)
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	old := spec{"gone.txt": {Data: "only in the old tree"}, "same.txt": {Data: "unchanged"}}
	new := spec{"a.txt": {Data: "abcdabcdabcd"}, "b.txt": {Data: "abcdXYZ"}, "same.txt": {Data: "unchanged"}, "l": {Link: "a.txt"}}
	plan := planOf(t, m, old, new)
	// The chunks of deleted and unchanged files are not needed.
	for _, c := range planOf(t, m, nil, old).Changes {
		for _, id := range c.New.Chunks {
			m.Delete(id)
		}
	}
	g := &countingGetter{Getter: m, reads: map[cas.ID]int{}}
	verified, err := Verify(ctx, g, plan)
	if err != nil {
		t.Fatal(err)
	}
	want := map[cas.ID]bool{} // "abcd" (in both files) and "XYZ"
	for _, c := range plan.Changes {
		for _, id := range c.New.Chunks {
			want[id] = true
		}
	}
	if len(want) != 2 || len(g.reads) != 2 {
		t.Errorf("%d chunks read, want the 2 the plan writes", len(g.reads))
	}
	for id, n := range g.reads {
		if !want[id] || n != 1 {
			t.Errorf("chunk %s read %d times", id.Short(), n)
		}
	}
	// What it read, it hands on: Apply writes the plan without reading
	// any chunk again, and reads others through.
	dst := newMemFS(old)
	if _, err := Apply(ctx, dst, verified.Getter(g), plan, Options{}); err != nil {
		t.Fatal(err)
	}
	sameSpec(t, dst.spec(), new)
	for id, n := range g.reads {
		if n != 1 {
			t.Errorf("chunk %s read %d times, once to verify", id.Short(), n)
		}
	}
	other, _ := m.Put(ctx, cas.KindChunk, []byte("not in the plan"))
	if b, err := verified.Getter(g).Get(ctx, other); err != nil || string(b) != "not in the plan" || g.reads[other] != 1 {
		t.Errorf("a chunk Verify did not read: %q %v, read %d times", b, err, g.reads[other])
	}

	m.Delete(plan.Changes[1].New.Chunks[1]) // b.txt's "XYZ"
	if _, err := Verify(ctx, m, plan); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("a missing chunk: %v", err)
	}
}
