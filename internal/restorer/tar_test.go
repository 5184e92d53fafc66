package restorer

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/manifest"
)

func TestExport(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	when := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	root := putTree(t, m, spec{"b/c.txt": {Data: "hello, tar\n"}, "a": {Link: "b/c.txt"}, "b/run": {Data: "#!", Exec: true}, "e": {Dir: true}, "z": {}})
	plan, err := PlanTree(ctx, m, root)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Export(ctx, &buf, m, plan, when); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		name, link, data string
		typ              byte
		mode             int64
	}
	want := []entry{
		{name: "a", typ: tar.TypeSymlink, link: "b/c.txt", mode: 0o777},
		{name: "b/", typ: tar.TypeDir, mode: 0o755},
		{name: "b/c.txt", typ: tar.TypeReg, data: "hello, tar\n", mode: 0o644},
		{name: "b/run", typ: tar.TypeReg, data: "#!", mode: 0o755},
		{name: "e/", typ: tar.TypeDir, mode: 0o755},
		{name: "z", typ: tar.TypeReg, mode: 0o644},
	}
	tr := tar.NewReader(&buf)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			if i != len(want) {
				t.Fatalf("%d entries, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got := entry{name: h.Name, link: h.Linkname, data: string(data), typ: h.Typeflag, mode: h.Mode}
		if i >= len(want) || got != want[i] {
			t.Fatalf("entry %d: %+v", i, got)
		}
		if !h.ModTime.Equal(when) {
			t.Errorf("%s: time %v, want %v", h.Name, h.ModTime, when)
		}
	}
}

func TestExportRefuses(t *testing.T) {
	ctx := context.Background()
	m := castest.NewMemory()
	plan := planOf(t, m, spec{"old": {Data: "x"}}, spec{"new": {Data: "y"}})
	err := Export(ctx, io.Discard, m, plan, time.Time{})
	if err == nil || !strings.HasPrefix(err.Error(), "export old: ") {
		t.Fatalf("a plan that deletes: %v", err)
	}

	// A file whose chunks do not add up to its size, or are missing.
	id, err := m.Put(ctx, cas.KindChunk, []byte("abc"))
	if err != nil {
		t.Fatal(err)
	}
	short := Plan{Changes: []manifest.Change{{Path: "f", Status: manifest.Added, New: manifest.Entry{Kind: manifest.KindFile, Size: 4, Chunks: []cas.ID{id}}}}}
	if err := Export(ctx, io.Discard, m, short, time.Time{}); err == nil || err.Error() != "f: 3 bytes, its entry says 4" {
		t.Fatalf("a file shorter than its entry: %v", err)
	}
	m.Delete(id)
	if err := Export(ctx, io.Discard, m, short, time.Time{}); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("a missing chunk: %v", err)
	}
}
