package manifest

import (
	"testing"

	"github.com/casckpt/casckpt/cas"
)

func TestStateID(t *testing.T) {
	file := Entry{Name: "a", Kind: KindFile, Size: 1, Lines: 1, Chunks: []cas.ID{chunk("x")}}
	if (Entry{}).StateID() != (cas.ID{}) {
		t.Error("the zero entry (absence) must have the zero state")
	}
	same := []struct {
		what string
		a, b Entry
	}{
		{"another name", file, Entry{Name: "b", Kind: KindFile, Size: 1, Lines: 1, Chunks: []cas.ID{chunk("x")}}},
		{"stats that follow from the bytes", file, Entry{Kind: KindFile, Chunks: []cas.ID{chunk("x")}}},
		{"directories of different contents", Entry{Kind: KindDir, Tree: EmptyTreeID}, Entry{Kind: KindDir, Tree: cas.Sum(cas.KindTree, []byte("t"))}},
		{"links, sizes aside", Entry{Kind: KindSymlink, Target: "t", Size: 1}, Entry{Name: "z", Kind: KindSymlink, Target: "t"}},
	}
	for _, c := range same {
		if c.a.StateID() != c.b.StateID() {
			t.Errorf("%s: state IDs differ", c.what)
		}
	}
	// Every pair of these must differ.
	distinct := []Entry{
		file,
		{Kind: KindFile, Exec: true, Chunks: []cas.ID{chunk("x")}},
		{Kind: KindFile, Chunks: []cas.ID{chunk("y")}},
		{Kind: KindFile, Chunks: []cas.ID{chunk("x"), chunk("y")}},
		{Kind: KindFile, Chunks: []cas.ID{chunk("y"), chunk("x")}},
		{Kind: KindFile},
		{Kind: KindFile, Exec: true},
		{Kind: KindSymlink, Target: "x"},
		{Kind: KindSymlink, Target: "y"},
		{Kind: KindDir, Tree: EmptyTreeID},
		{},
	}
	seen := map[cas.ID]int{}
	for i, e := range distinct {
		id := e.StateID()
		if j, ok := seen[id]; ok {
			t.Errorf("entries %d and %d have the same state ID", j, i)
		}
		seen[id] = i
		if e.Kind != 0 && (id == chunk("x") || id == e.Tree) {
			t.Errorf("entry %d: a state ID equals an object ID", i)
		}
	}
	// State IDs are stored in write ledgers: they must never change.
	for _, c := range []struct {
		e    Entry
		want string
	}{
		{Entry{Kind: KindFile, Chunks: []cas.ID{chunk("x")}}, "5459d547e357f12be8cb741242581c6649bb32f6fe9e2891765bafef9165eb18"},
		{Entry{Kind: KindSymlink, Target: "t"}, "52f3ead7587c836d01f30e68f64e0d6f7fd1887eeee1b51696f8661c89ff492b"},
	} {
		if got := c.e.StateID().String(); got != c.want {
			t.Errorf("state ID of %+v is %s, want %s", c.e, got, c.want)
		}
	}
}
