package manifest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
)

func chunk(s string) cas.ID { return cas.Sum(cas.KindChunk, []byte(s)) }

func TestEncodeDecodeRoundTrip(t *testing.T) {
	tree := Tree{Entries: []Entry{
		{Name: "a.go", Kind: KindFile, Size: 10, Lines: 2, Chunks: []cas.ID{chunk("x")}},
		{Name: "bin", Kind: KindFile, Exec: true, Binary: true, Size: 3, Chunks: []cas.ID{chunk("y")}},
		{Name: "dir", Kind: KindDir, Tree: EmptyTreeID},
		{Name: "empty", Kind: KindFile},
		{Name: "link", Kind: KindSymlink, Target: "../a.go", Size: 7},
		{Name: "nl\nname\xff", Kind: KindFile},
	}}
	b, err := Encode(tree)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != len(tree.Entries) {
		t.Fatalf("%d entries back, want %d", len(got.Entries), len(tree.Entries))
	}
	for i := range tree.Entries {
		if !got.Entries[i].SameContent(tree.Entries[i]) || got.Entries[i].Name != tree.Entries[i].Name {
			t.Errorf("entry %d: got %+v want %+v", i, got.Entries[i], tree.Entries[i])
		}
	}
	again, _ := Encode(got)
	if !bytes.Equal(again, b) {
		t.Fatal("encoding is not canonical")
	}
}

func TestEncodeRejectsUnsafeTrees(t *testing.T) {
	for name, tree := range map[string]Tree{
		"dotdot":   {Entries: []Entry{{Name: "..", Kind: KindFile}}},
		"slash":    {Entries: []Entry{{Name: "a/b", Kind: KindFile}}},
		"empty":    {Entries: []Entry{{Name: "", Kind: KindFile}}},
		"nul":      {Entries: []Entry{{Name: "a\x00", Kind: KindFile}}},
		"unsorted": {Entries: []Entry{{Name: "b", Kind: KindFile}, {Name: "a", Kind: KindFile}}},
		"dup":      {Entries: []Entry{{Name: "a", Kind: KindFile}, {Name: "a", Kind: KindFile}}},
		"nolink":   {Entries: []Entry{{Name: "l", Kind: KindSymlink}}},
		"long":     {Entries: []Entry{{Name: strings.Repeat("x", 256), Kind: KindFile}}},
	} {
		if _, err := Encode(tree); err == nil {
			t.Errorf("%s: encoded an invalid tree", name)
		}
	}
}

func TestDiffAndWalk(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	put := func(tr Tree) cas.ID {
		id, err := Put(ctx, m, tr)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sub := put(Tree{Entries: []Entry{{Name: "x", Kind: KindFile, Chunks: []cas.ID{chunk("x")}, Size: 1}}})
	a := put(Tree{Entries: []Entry{
		{Name: "d", Kind: KindDir, Tree: sub},
		{Name: "f", Kind: KindFile, Chunks: []cas.ID{chunk("f1")}, Size: 2},
		{Name: "gone", Kind: KindFile},
		{Name: "t", Kind: KindFile},
	}})
	b := put(Tree{Entries: []Entry{
		{Name: "d", Kind: KindDir, Tree: sub},
		{Name: "f", Kind: KindFile, Chunks: []cas.ID{chunk("f2")}, Size: 2},
		{Name: "new", Kind: KindDir, Tree: sub},
		{Name: "t", Kind: KindSymlink, Target: "f", Size: 1},
	}})
	changes, err := Diff(ctx, m, a, b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, string(c.Status)+" "+c.Path)
	}
	want := "modified f|deleted gone|added new|added new/x|type-changed t"
	if strings.Join(got, "|") != want {
		t.Fatalf("diff = %q\nwant %q", strings.Join(got, "|"), want)
	}
	var walked []string
	if err := Walk(ctx, m, b, func(p string, e Entry) error { walked = append(walked, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(walked, " ") != "d d/x f new new/x t" {
		t.Fatalf("walk order %q", walked)
	}
	e, err := Lookup(ctx, m, b, "new/x")
	if err != nil || e.Kind != KindFile {
		t.Fatalf("lookup: %+v %v", e, err)
	}
	if _, err := Lookup(ctx, m, b, "f/x"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("lookup below a file: %v", err)
	}
}

func TestCountLines(t *testing.T) {
	for _, c := range []struct {
		in     string
		lines  int64
		binary bool
	}{
		{"", 0, false}, {"a", 1, false}, {"a\n", 1, false}, {"a\nb", 2, false}, {"a\x00b\n", 0, true},
	} {
		l, b := CountLines([]byte(c.in))
		if l != c.lines || b != c.binary {
			t.Errorf("CountLines(%q) = %d, %v; want %d, %v", c.in, l, b, c.lines, c.binary)
		}
	}
}

func FuzzDecode(f *testing.F) {
	b, _ := Encode(Tree{Entries: []Entry{
		{Name: "a", Kind: KindFile, Size: 3, Lines: 1, Chunks: []cas.ID{chunk("a")}},
		{Name: "d", Kind: KindDir},
		{Name: "l", Kind: KindSymlink, Target: "a"},
		{Name: "u", Kind: KindUnreadable},
	}})
	f.Add(b)
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := Decode(data)
		if err != nil {
			return
		}
		for _, e := range tree.Entries {
			if ValidName(e.Name) != nil {
				t.Fatalf("decoded an unsafe name %q", e.Name)
			}
		}
		again, err := Encode(tree)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("decoded tree does not re-encode to its input: %v", err)
		}
	})
}

// bomb stores 30 nested trees of two entries each naming the next (2^30
// paths in 31 objects) and returns the top one.
func bomb(t *testing.T, ctx context.Context, p cas.Putter, leaf string) cas.ID {
	t.Helper()
	id, err := Put(ctx, p, Tree{Entries: []Entry{{Name: "f", Kind: KindFile, Size: int64(len(leaf)), Chunks: []cas.ID{chunk(leaf)}}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if id, err = Put(ctx, p, Tree{Entries: []Entry{{Name: "a", Kind: KindDir, Tree: id}, {Name: "b", Kind: KindDir, Tree: id}}}); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// A tree that names one subtree at very many paths is refused, not walked
// without end; a diff between two such trees too.
func TestWalkAndDiffOfABomb(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	top, other := bomb(t, ctx, m, "x"), bomb(t, ctx, m, "y")
	calls := 0
	err := Walk(ctx, m, top, func(string, Entry) error { calls++; return nil })
	if !errors.Is(err, ErrTooLarge) || calls != 0 {
		t.Fatalf("walk of a bomb: %v after %d entries", err, calls)
	}
	for _, pair := range [][2]cas.ID{{EmptyTreeID, top}, {top, EmptyTreeID}, {top, other}} {
		if changes, err := Diff(ctx, m, pair[0], pair[1]); !errors.Is(err, ErrTooLarge) || changes != nil {
			t.Fatalf("diff of a bomb: %d changes, %v", len(changes), err)
		}
	}
	if changes, err := Diff(ctx, m, top, top); err != nil || len(changes) != 0 {
		t.Fatalf("diff of a bomb with itself: %d changes, %v", len(changes), err)
	}
}

// TestUnreadableEntries: a KindUnreadable entry round-trips by name
// alone; Diff reports no change at it or below it, whatever the other tree
// holds there (nothing, a file, a directory), Walk does not show it, and
// Lookup finds neither it nor what lies below it.
func TestUnreadableEntries(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	put := func(tr Tree) cas.ID {
		id, err := Put(ctx, m, tr)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	sub := put(Tree{Entries: []Entry{{Name: "x", Kind: KindFile, Chunks: []cas.ID{chunk("x")}, Size: 1}}})
	unread := Tree{Entries: []Entry{
		{Name: "dir", Kind: KindUnreadable},
		{Name: "f", Kind: KindFile, Chunks: []cas.ID{chunk("f1")}, Size: 2},
		{Name: "gone", Kind: KindUnreadable},
		{Name: "secret", Kind: KindUnreadable},
	}}
	b, err := Encode(unread)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Decode(b); err != nil || len(back.Entries) != 4 || back.Entries[3].Kind != KindUnreadable || back.Entries[3].Name != "secret" {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	a := put(unread)
	full := put(Tree{Entries: []Entry{
		{Name: "dir", Kind: KindDir, Tree: sub},
		{Name: "f", Kind: KindFile, Chunks: []cas.ID{chunk("f2")}, Size: 2},
		{Name: "new", Kind: KindDir, Tree: a}, // an added directory holding unreadable entries
		{Name: "secret", Kind: KindFile, Chunks: []cas.ID{chunk("s")}, Size: 1},
	}})
	for _, pair := range [][2]cas.ID{{a, full}, {full, a}} {
		changes, err := Diff(ctx, m, pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range changes {
			got = append(got, string(c.Status)+" "+c.Path)
		}
		if s := strings.Join(got, "|"); s != "modified f|added new|added new/f" && s != "modified f|deleted new|deleted new/f" {
			t.Errorf("diff = %q: only f and new/f changed", s)
		}
	}
	var walked []string
	if err := Walk(ctx, m, full, func(p string, e Entry) error { walked = append(walked, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(walked, " ") != "dir dir/x f new new/f secret" {
		t.Fatalf("walk shows %q", walked)
	}
	for _, c := range []struct {
		root cas.ID
		p    string
	}{{a, "secret"}, {a, "dir"}, {a, "dir/x"}, {full, "new/secret"}, {full, "new/dir/x"}} {
		if _, err := Lookup(ctx, m, c.root, c.p); !errors.Is(err, ErrNotExist) {
			t.Errorf("lookup %s: %v, want ErrNotExist", c.p, err)
		}
	}
}
