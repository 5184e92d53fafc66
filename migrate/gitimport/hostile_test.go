package gitimport

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// A hostile store: a tree that contains itself, a tree bomb, a blob that
// does not match its name and a file over the size limit. Each damaged
// project fails alone with a one-line error; the others are imported; the
// large file is left out unread.
func TestMigrateHostileStore(t *testing.T) {
	r := newRawStore(t)
	base := t.TempDir()
	wd := func(name string) string { return filepath.Join(base, name) }
	small := r.Put("blob", []byte("hello\n"))

	// A loose tree whose entry names the tree itself: its content cannot
	// hash to its name, and walking it never ends.
	self := strings.Repeat("ab", 20)
	r.PutAs(self, "tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: small}, gittest.Entry{Mode: "40000", Name: "loop", Hash: self}))
	r.project("cycle", wd("cycle"), self)

	// 30 nested trees of two entries each naming the next: 2^30 paths.
	level := r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: small}))
	for range 30 {
		level = r.Put("tree", gittest.Tree(gittest.Entry{Mode: "40000", Name: "a", Hash: level}, gittest.Entry{Mode: "40000", Name: "b", Hash: level}))
	}
	r.project("bomb", wd("bomb"), level)

	// A blob stored under another blob's name.
	liar := r.PutAs(strings.Repeat("cd", 20), "blob", []byte("not what its name says\n"))
	r.project("corrupt", wd("corrupt"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: liar})))

	// A large file whose content does not match its name either: it must
	// be left out without being read.
	big := r.PutAs(strings.Repeat("ef", 20), "blob", bytes.Repeat([]byte{'x'}, 2<<20))
	r.project("good", wd("good"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "small.txt", Hash: small}, gittest.Entry{Mode: "100644", Name: "big.bin", Hash: big})))

	store := gittest.NewStore(t)
	rep, err := Run(context.Background(), store, r, Options{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsImported != 1 || rep.FilesTooLarge != 1 {
		t.Fatalf("imported %d snapshots, %d files too large; want 1 and 1; errors %q", rep.SnapshotsImported, rep.FilesTooLarge, rep.Errors)
	}
	wantErrs := map[string]string{"cycle": "does not match its hash", "bomb": "more than 50000 files", "corrupt": "does not match its hash"}
	for name, want := range wantErrs {
		found := false
		for _, e := range rep.Errors {
			if strings.Contains(e, wd(name)+":") {
				if found || !strings.Contains(e, want) || strings.Contains(e, "\n") {
					t.Errorf("error of %s: %q, want one line with %q", name, e, want)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no error for %s in %q", name, rep.Errors)
		}
	}
	if len(rep.Errors) != len(wantErrs) {
		t.Errorf("errors: %q", rep.Errors)
	}
	files, _ := gittest.Snapshot(t, store, wd("good"), gittest.Only(t, store, wd("good")))
	if !maps.Equal(files, map[string]gittest.File{"small.txt": {Kind: "file", Data: "hello\n"}}) {
		t.Errorf("good project holds %v", files)
	}
	list, err := store.List(context.Background(), wd("good"), 0)
	if err != nil || list[0].MaxFileSize != 1<<20 {
		t.Errorf("the imported snapshot's size limit: %+v %v", list, err)
	}
}

// filler reads n bytes b.
type filler struct {
	b byte
	n int64
}

func (f *filler) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.n))
	for i := range p[:n] {
		p[i] = f.b
	}
	f.n -= int64(n)
	return n, nil
}

// bomb is a loose object's raw bytes: header, then n bytes b.
func bomb(header string, b byte, n int64) io.Reader {
	return io.MultiReader(strings.NewReader(header), &filler{b: b, n: n})
}

// Zlib bombs among loose objects: a blob whose header declares 10 bytes
// and whose stream inflates to 128 MiB (128 KiB on disk), a tree likewise,
// and a header that never ends. Each project fails alone with a one-line
// error, and the import allocates far less than the bombs inflate to.
func TestMigrateZlibBomb(t *testing.T) {
	r := newRawStore(t)
	base := t.TempDir()
	wd := func(name string) string { return filepath.Join(base, name) }
	const size = 128 << 20
	blob := r.PutRaw(strings.Repeat("a1", 20), bomb("blob 10\x00", 0, size))
	r.project("blob", wd("blob"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: blob})))
	tree := r.PutRaw(strings.Repeat("a2", 20), bomb("tree 10\x00", 0, size))
	r.project("tree", wd("tree"), tree)
	header := r.PutRaw(strings.Repeat("a3", 20), bomb("blob 1", '1', size))
	r.project("header", wd("header"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: header})))
	r.project("good", wd("good"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: r.Put("blob", []byte("ok\n"))})))

	rep := importBounded(t, r)
	if rep.SnapshotsImported != 1 {
		t.Errorf("imported %d snapshots, want 1 (good)", rep.SnapshotsImported)
	}
	wantErrs := map[string]string{"blob": "longer than the 10 bytes its header declares",
		"tree": "longer than the 10 bytes its header declares", "header": "header longer than 32 bytes"}
	for name, want := range wantErrs {
		found := 0
		for _, e := range rep.Errors {
			if strings.Contains(e, wd(name)+":") {
				found++
				if !strings.Contains(e, want) || strings.Contains(e, "\n") {
					t.Errorf("error of %s: %q, want one line with %q", name, e, want)
				}
			}
		}
		if found != 1 {
			t.Errorf("%d errors for %s in %q", found, name, rep.Errors)
		}
	}
	if len(rep.Errors) != len(wantErrs) {
		t.Errorf("errors: %q", rep.Errors)
	}
}

// packObject is an object of a pack written by putPack: its name, type
// (3 a blob, 6 a delta on the object before it) and declared size, and
// what its zlib stream inflates to.
type packObject struct {
	name string
	typ  byte
	size int64
	raw  io.Reader
}

// putPack writes a pack file of objs, and its index, as git names them.
func putPack(t *testing.T, r *gittest.Repo, objs ...packObject) {
	t.Helper()
	var pk bytes.Buffer
	pk.WriteString("PACK")
	_ = binary.Write(&pk, binary.BigEndian, [2]uint32{2, uint32(len(objs))}) // version, count
	offsets, crcs := make([]uint32, len(objs)), make([]uint32, len(objs))
	for i, o := range objs {
		offsets[i] = uint32(pk.Len())
		c, size := o.typ<<4|byte(o.size&15), o.size>>4
		for ; size > 0; size >>= 7 {
			pk.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
		}
		pk.WriteByte(c)
		if o.typ == 6 {
			pk.WriteByte(byte(offsets[i] - offsets[i-1])) // under 128 here
		}
		zw := zlib.NewWriter(&pk)
		if _, err := io.Copy(zw, o.raw); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		crcs[i] = crc32.ChecksumIEEE(pk.Bytes()[offsets[i]:])
	}
	sum := sha1.Sum(pk.Bytes())
	pk.Write(sum[:])

	order := make([]int, len(objs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(objs[a].name, objs[b].name) })
	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c'})
	_ = binary.Write(&ix, binary.BigEndian, uint32(2))
	fanout := make([]uint32, 256)
	for _, o := range objs {
		h, _ := hex.DecodeString(o.name)
		for b := int(h[0]); b < 256; b++ {
			fanout[b]++
		}
	}
	_ = binary.Write(&ix, binary.BigEndian, fanout)
	for _, i := range order {
		h, _ := hex.DecodeString(objs[i].name)
		ix.Write(h)
	}
	for _, i := range order {
		_ = binary.Write(&ix, binary.BigEndian, crcs[i])
	}
	for _, i := range order {
		_ = binary.Write(&ix, binary.BigEndian, offsets[i])
	}
	ix.Write(sum[:])
	isum := sha1.Sum(ix.Bytes())
	ix.Write(isum[:])
	base := "objects/pack/pack-" + hex.EncodeToString(sum[:])
	r.Write(base+".pack", pk.String())
	r.Write(base+".idx", ix.String())
}

// Zlib bombs in a pack file: a blob whose header declares 10 bytes and
// whose stream inflates to 128 MiB, and a delta likewise. go-git would
// inflate either whole.
func TestMigratePackBomb(t *testing.T) {
	r := newRawStore(t)
	base := t.TempDir()
	wd := func(name string) string { return filepath.Join(base, name) }
	blob, delta := strings.Repeat("b1", 20), strings.Repeat("b3", 20)
	putPack(t, r.Repo, packObject{name: blob, typ: 3, size: 10, raw: &filler{n: 128 << 20}},
		packObject{name: strings.Repeat("b2", 20), typ: 3, size: 3, raw: strings.NewReader("abc")},
		packObject{name: delta, typ: 6, size: 10, raw: &filler{n: 128 << 20}})
	r.project("blob", wd("blob"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: blob})))
	r.project("delta", wd("delta"), r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: delta})))

	rep := importBounded(t, r)
	if rep.SnapshotsImported != 0 || len(rep.Errors) != 2 {
		t.Fatalf("imported %d, errors %q; want 0 and 2", rep.SnapshotsImported, rep.Errors)
	}
	for i, name := range []string{"blob", "delta"} {
		if e := rep.Errors[i]; !strings.Contains(e, wd(name)+":") || !strings.Contains(e, "longer than the 10 bytes its header declares") || strings.Contains(e, "\n") {
			t.Errorf("error of %s: %q", name, e)
		}
	}
}

// importBounded imports r into a new store and fails t unless the import
// allocated under 32 MiB in all: a bomb is refused from its header, never
// inflated first.
func importBounded(t *testing.T, r *rawStore) Report {
	t.Helper()
	store := gittest.NewStore(t)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := Run(context.Background(), store, r, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the import allocated %d KiB", alloc>>10)
	if alloc > 32<<20 {
		t.Errorf("the import allocated %d MiB", alloc>>20)
	}
	return rep
}
