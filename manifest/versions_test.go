package manifest

import (
	"context"
	"maps"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
)

// TestVersions: what each object of the new tree replaced at its path:
// the root, a changed subtree, the chunks of a changed file pairwise when
// it has as many; nothing for an added path, a path of another kind, an
// unchanged subtree or a file whose chunks changed in number.
func TestVersions(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	put := func(entries ...Entry) cas.ID {
		id, err := Put(ctx, m, Tree{Entries: entries})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	file := func(name string, chunks ...string) Entry {
		e := Entry{Name: name, Kind: KindFile}
		for _, c := range chunks {
			e.Chunks = append(e.Chunks, chunk(c))
		}
		return e
	}
	same := put(file("s", "s"))
	oldSub, newSub := put(file("x", "x1")), put(file("x", "x2"))
	a := put(Entry{Name: "d", Kind: KindDir, Tree: oldSub}, file("f", "f1", "g1", "h"), file("grown", "a"),
		Entry{Name: "kind", Kind: KindDir, Tree: same}, Entry{Name: "u", Kind: KindDir, Tree: same})
	b := put(Entry{Name: "d", Kind: KindDir, Tree: newSub}, file("f", "f2", "g2", "h"), file("grown", "a2", "b2"),
		file("kind", "k"), file("new", "n"), Entry{Name: "u", Kind: KindDir, Tree: same})
	got := map[cas.ID]cas.ID{}
	if err := NewVersionFinder(ctx, m).Versions(a, b, got); err != nil {
		t.Fatal(err)
	}
	want := map[cas.ID]cas.ID{b: a, newSub: oldSub, chunk("x2"): chunk("x1"), chunk("f2"): chunk("f1"), chunk("g2"): chunk("g1")}
	if !maps.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
}

// countingGetter counts the Gets of each object.
type countingGetter struct {
	cas.Getter
	gets map[cas.ID]int
}

func (c countingGetter) Get(ctx context.Context, id cas.ID) ([]byte, error) {
	c.gets[id]++
	return c.Getter.Get(ctx, id)
}

// TestVersionFinderReadsATreeOnce: over the pairs a-b and b-c of a
// project's snapshots, the trees of b that both pairs walk are read once,
// and the versions are those of each pair on its own.
func TestVersionFinderReadsATreeOnce(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	root := func(sub string, f string) (cas.ID, cas.ID) {
		s, err := Put(ctx, m, Tree{Entries: []Entry{{Name: "x", Kind: KindFile, Chunks: []cas.ID{chunk(sub)}}}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Put(ctx, m, Tree{Entries: []Entry{{Name: "d", Kind: KindDir, Tree: s}, {Name: "f", Kind: KindFile, Chunks: []cas.ID{chunk(f)}}}})
		if err != nil {
			t.Fatal(err)
		}
		return r, s
	}
	a, subA := root("x1", "f1")
	b, subB := root("x2", "f2")
	c, subC := root("x3", "f3")
	g := countingGetter{m, map[cas.ID]int{}}
	f := NewVersionFinder(ctx, g)
	got := map[cas.ID]cas.ID{}
	for _, pair := range [][2]cas.ID{{a, b}, {b, c}} {
		if err := f.Versions(pair[0], pair[1], got); err != nil {
			t.Fatal(err)
		}
	}
	want := map[cas.ID]cas.ID{b: a, subB: subA, chunk("x2"): chunk("x1"), chunk("f2"): chunk("f1"),
		c: b, subC: subB, chunk("x3"): chunk("x2"), chunk("f3"): chunk("f2")}
	if !maps.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	for _, id := range []cas.ID{a, subA, b, subB, c, subC} {
		if g.gets[id] != 1 {
			t.Errorf("tree %s read %d times, want once", id.Short(), g.gets[id])
		}
	}
}
