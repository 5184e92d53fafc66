package gc

import (
	"context"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/manifest"
)

func chunk(s string) cas.ID { return cas.Sum(cas.KindChunk, []byte(s)) }

// treePutter returns a function that stores a tree in m.
func treePutter(t *testing.T, m *castest.Memory) func(manifest.Tree) cas.ID {
	return func(tr manifest.Tree) cas.ID {
		id, err := manifest.Put(context.Background(), m, tr)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

func TestMarkAndRelease(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	put := treePutter(t, m)
	sub := put(manifest.Tree{Entries: []manifest.Entry{{Name: "s", Kind: manifest.KindFile, Chunks: []cas.ID{chunk("shared")}}}})
	r1 := put(manifest.Tree{Entries: []manifest.Entry{
		{Name: "a", Kind: manifest.KindFile, Chunks: []cas.ID{chunk("one"), chunk("one")}},
		{Name: "d", Kind: manifest.KindDir, Tree: sub},
	}})
	// r2 names chunk "two" twice and sub twice: each counts once.
	r2 := put(manifest.Tree{Entries: []manifest.Entry{
		{Name: "b", Kind: manifest.KindFile, Chunks: []cas.ID{chunk("two"), chunk("three"), chunk("two")}},
		{Name: "d", Kind: manifest.KindDir, Tree: sub},
		{Name: "e", Kind: manifest.KindDir, Tree: sub},
	}})
	g, err := Mark(ctx, m, []cas.ID{r1, r2, r2}, 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Objects() != 7 {
		t.Fatalf("%d live objects, want 7", g.Objects())
	}
	unit := func(cas.ID) int64 { return 1 }
	if a1, a2 := g.Alone(r1, unit), g.Alone(r2, unit); a1 != 2 || a2 != 0 || g.Objects() != 7 {
		t.Fatalf("alone: r1 %d (want 2), r2 listed twice %d (want 0), %d live", a1, a2, g.Objects())
	}
	if freed := g.Release(r1, unit); freed != 2 || g.Live(chunk("one")) || !g.Live(chunk("shared")) {
		t.Fatalf("release r1 freed %d", freed)
	}
	if freed := g.Release(r2, unit); freed != 0 {
		t.Fatalf("releasing one of two references to r2 freed %d", freed)
	}
	if alone := g.Alone(r2, unit); alone != 5 {
		t.Fatalf("r2 alone holds %d, want 5", alone)
	}
	if freed := g.Release(r2, unit); freed != 5 || g.Objects() != 0 {
		t.Fatalf("last release freed %d, %d left", freed, g.Objects())
	}
	if _, err := Mark(ctx, m, []cas.ID{chunk("not a tree")}, 0, 0, nil); err == nil {
		t.Fatal("Mark went past a missing tree")
	}
}

// TestBasesStayWhileTheirDeltasDo: the base of a reachable delta is live
// though no root reaches it, its subtrees are not, and it is freed (and
// counted alone) with its last delta, once.
func TestBasesStayWhileTheirDeltasDo(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	put := treePutter(t, m)
	file := func(c string) manifest.Entry {
		return manifest.Entry{Name: "f", Kind: manifest.KindFile, Chunks: []cas.ID{chunk(c)}}
	}
	sub := put(manifest.Tree{Entries: []manifest.Entry{file("old")}})
	r1 := put(manifest.Tree{Entries: []manifest.Entry{{Name: "d", Kind: manifest.KindDir, Tree: sub}}})
	r2 := put(manifest.Tree{Entries: []manifest.Entry{file("v2")}})
	r3 := put(manifest.Tree{Entries: []manifest.Entry{file("v3")}})
	// v2 and v3 are deltas of "old", and r2 and r3 of r1's subtree.
	bases := map[cas.ID]cas.ID{chunk("v2"): chunk("old"), chunk("v3"): chunk("old"), r2: sub, r3: sub}
	g, err := Mark(ctx, m, []cas.ID{r1, r2, r3}, 0, 0, func(id cas.ID) (cas.ID, bool) { b, ok := bases[id]; return b, ok })
	if err != nil {
		t.Fatal(err)
	}
	unit := func(cas.ID) int64 { return 1 }
	if n := g.Objects(); n != 7 {
		t.Fatalf("%d live objects, want 7", n)
	}
	if freed := g.Release(r1, unit); freed != 1 || !g.Live(sub) || !g.Live(chunk("old")) {
		t.Fatalf("releasing r1 freed %d; its subtree and chunk, bases, live %v %v", freed, g.Live(sub), g.Live(chunk("old")))
	}
	if alone := g.Alone(r2, unit); alone != 2 {
		t.Fatalf("r2 alone holds %d, want 2 (r3 keeps the bases)", alone)
	}
	if freed := g.Release(r2, unit); freed != 2 {
		t.Fatalf("releasing r2 freed %d, want 2", freed)
	}
	if alone := g.Alone(r3, unit); alone != 4 {
		t.Fatalf("r3 alone holds %d, want 4: itself, v3 and both bases", alone)
	}
	if freed := g.Release(r3, unit); freed != 4 || g.Objects() != 0 {
		t.Fatalf("releasing r3 freed %d, %d left", freed, g.Objects())
	}
}

func snaps(n int, pinned ...int) []Snapshot {
	out := make([]Snapshot, n)
	for i := range out {
		out[i] = Snapshot{ID: cas.ID{byte(i + 1), byte(n)}, Root: cas.ID{byte(i + 1)}, Time: time.Unix(int64(1000-i), 0)}
	}
	for _, p := range pinned {
		out[p].Pinned = true
	}
	return out
}

func TestPlanRetention(t *testing.T) {
	now := time.Unix(100*86400, 0)
	projects := []Project{
		{Workdir: "/live", LastTouch: now, State: Live, Snapshots: snaps(5, 4)},
		{Workdir: "/orphan", LastTouch: now, State: Orphan, Snapshots: snaps(2)},
		{Workdir: "/stale", LastTouch: now.Add(-30 * 24 * time.Hour), State: Live, Snapshots: snaps(2)},
		{Workdir: "/stale-pinned", LastTouch: now.Add(-30 * 24 * time.Hour), State: Live, Snapshots: snaps(2, 0)},
	}
	for _, c := range []struct {
		name             string
		pol              Policy
		keep, orph, stal int
		forget           int
	}{
		{"nothing", Policy{}, 0, 0, 0, 0},
		{"keep 2 spares the pinned oldest", Policy{Keep: 2}, 2, 0, 0, 0},
		{"orphans", Policy{DropOrphans: true}, 0, 2, 0, 1},
		{"stale keeps pinned", Policy{StaleAfter: 7 * 24 * time.Hour}, 0, 0, 3, 1},
		{"all", Policy{Keep: 1, DropOrphans: true, StaleAfter: 7 * 24 * time.Hour}, 3, 2, 3, 2},
	} {
		p := PlanRetention(projects, c.pol, now)
		if p.Count(WhyKeep) != c.keep || p.Count(WhyOrphan) != c.orph || p.Count(WhyStale) != c.stal || len(p.Forget) != c.forget {
			t.Errorf("%s: keep %d orphan %d stale %d forget %v", c.name, p.Count(WhyKeep), p.Count(WhyOrphan), p.Count(WhyStale), p.Forget)
		}
	}
}

// TestPlanRetentionStates: the orphan rule drops orphans alone; an
// unreachable project is kept by it, and the stale rule treats every
// state alike.
func TestPlanRetentionStates(t *testing.T) {
	now := time.Unix(100*86400, 0)
	old := now.Add(-30 * 24 * time.Hour)
	orphans := Policy{DropOrphans: true}
	both := Policy{DropOrphans: true, StaleAfter: 7 * 24 * time.Hour}
	for _, c := range []struct {
		name   string
		state  State
		touch  time.Time
		pinned bool
		pol    Policy
		why    Why // of every dropped snapshot; "" when none is dropped
		forget bool
	}{
		{"live", Live, now, false, both, "", false},
		{"orphan", Orphan, now, false, orphans, WhyOrphan, true},
		{"orphan with --keep-orphans", Orphan, now, false, Policy{}, "", false},
		{"orphan pinned", Orphan, now, true, orphans, WhyOrphan, false},
		{"unreachable", Unreachable, now, false, orphans, "", false},
		{"unreachable fresh", Unreachable, now, false, both, "", false},
		{"unreachable stale", Unreachable, old, false, both, WhyStale, true},
		{"unreachable stale pinned", Unreachable, old, true, both, WhyStale, false},
		{"orphan stale: the orphan rule names it", Orphan, old, false, both, WhyOrphan, true},
		{"live stale", Live, old, false, both, WhyStale, true},
		{"zero state is not an orphan", "", now, false, orphans, "", false},
	} {
		p := Project{Workdir: "/p", LastTouch: c.touch, State: c.state, Snapshots: snaps(3)}
		if c.pinned {
			p.Snapshots = snaps(3, 0)
		}
		plan := PlanRetention([]Project{p}, c.pol, now)
		wantDrops := 0
		if c.why != "" {
			wantDrops = 3
			if c.pinned {
				wantDrops = 2
			}
		}
		if len(plan.Drops) != wantDrops || plan.Count(c.why) != wantDrops || (len(plan.Forget) == 1) != c.forget {
			t.Errorf("%s: drops %+v, forget %v", c.name, plan.Drops, plan.Forget)
		}
	}
}

func TestPlanCap(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	// Three projects of four snapshots, each snapshot one unique 1-byte-cost
	// chunk plus its root tree.
	var projects []Project
	var roots []cas.ID
	for pi, name := range []string{"/a", "/b", "/c"} {
		p := Project{Workdir: name, LastTouch: time.Unix(int64(pi), 0), State: Live}
		for si := range 4 {
			root, _ := manifest.Put(ctx, m, manifest.Tree{Entries: []manifest.Entry{{Name: "f", Kind: manifest.KindFile, Chunks: []cas.ID{chunk(name + string(rune('0'+si)))}}}})
			p.Snapshots = append(p.Snapshots, Snapshot{ID: cas.ID{byte(pi), byte(si)}, Root: root, Time: time.Unix(int64(100-si*10+pi), 0)})
			roots = append(roots, root)
		}
		projects = append(projects, p)
	}
	chunks := map[cas.ID]bool{}
	for _, p := range projects {
		for i := range p.Snapshots {
			chunks[chunk(p.Workdir+string(rune('0'+i)))] = true
		}
	}
	size := func(id cas.ID) int64 {
		if chunks[id] {
			return 1
		}
		return 0 // trees cost nothing here
	}
	mark := func() *Graph {
		g, err := Mark(ctx, m, roots, 0, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	// 12 bytes live; a cap of 9 drops 3 snapshots, one oldest per project.
	plan, projected, fits := PlanCap(Plan{}, CapInput{Projects: projects, Graph: mark(), Size: size, Cap: 9})
	if !fits || projected != 9 || len(plan.Drops) != 3 {
		t.Fatalf("cap 9: %d drops, projected %d, fits %v", len(plan.Drops), projected, fits)
	}
	seen := map[string]bool{}
	for _, d := range plan.Drops {
		if seen[d.Project] || d.Why != WhyCap {
			t.Fatalf("not round robin: %+v", plan.Drops)
		}
		seen[d.Project] = true
	}
	// A cap of 2 leaves the current project its newest snapshot and empties
	// the least recently touched others.
	protect := projects[2].Snapshots[0].ID
	plan, projected, fits = PlanCap(Plan{}, CapInput{Projects: projects, Graph: mark(), Size: size, Cap: 2, Protect: protect, Current: "/c"})
	if !fits || projected != 2 {
		t.Fatalf("cap 2: projected %d fits %v", projected, fits)
	}
	for _, d := range plan.Drops {
		if d.ID == protect {
			t.Fatal("the protected snapshot was dropped")
		}
	}
	if len(plan.Forget) != 1 || plan.Forget[0] != "/a" {
		t.Fatalf("forgotten projects %v, want the least recently touched /a", plan.Forget)
	}
	// Pinned snapshots beyond the cap: it cannot fit.
	for i := range projects {
		for j := range projects[i].Snapshots {
			projects[i].Snapshots[j].Pinned = true
		}
	}
	if _, _, fits := PlanCap(Plan{}, CapInput{Projects: projects, Graph: mark(), Size: size, Cap: 2}); fits {
		t.Fatal("a cap below the pinned snapshots' size reported as met")
	}
}
