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
	if err := Versions(ctx, m, a, b, got); err != nil {
		t.Fatal(err)
	}
	want := map[cas.ID]cas.ID{b: a, newSub: oldSub, chunk("x2"): chunk("x1"), chunk("f2"): chunk("f1"), chunk("g2"): chunk("g1")}
	if !maps.Equal(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
}
