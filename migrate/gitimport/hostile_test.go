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

// putPack writes a pack file holding one object, name, a blob whose
// header declares size bytes and whose zlib stream inflates to raw, and
// its index, as git names them.
func putPack(t *testing.T, r *gittest.Repo, name string, size int64, raw io.Reader) {
	t.Helper()
	var pk bytes.Buffer
	pk.WriteString("PACK")
	_ = binary.Write(&pk, binary.BigEndian, [2]uint32{2, 1}) // version, count
	c := byte(3<<4) | byte(size&15)                          // a blob
	for size >>= 4; size > 0; size >>= 7 {
		pk.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
	}
	pk.WriteByte(c)
	zw := zlib.NewWriter(&pk)
	if _, err := io.Copy(zw, raw); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	crc := crc32.ChecksumIEEE(pk.Bytes()[12:])
	sum := sha1.Sum(pk.Bytes())
	pk.Write(sum[:])

	var ix bytes.Buffer
	ix.Write([]byte{0xff, 't', 'O', 'c'})
	h, _ := hex.DecodeString(name)
	fanout := make([]uint32, 256)
	for i := int(h[0]); i < 256; i++ {
		fanout[i] = 1
	}
	_ = binary.Write(&ix, binary.BigEndian, uint32(2))
	_ = binary.Write(&ix, binary.BigEndian, fanout)
	ix.Write(h)
	_ = binary.Write(&ix, binary.BigEndian, [2]uint32{crc, 12}) // its CRC, its offset
	ix.Write(sum[:])
	isum := sha1.Sum(ix.Bytes())
	ix.Write(isum[:])
	base := "objects/pack/pack-" + hex.EncodeToString(sum[:])
	r.Write(base+".pack", pk.String())
	r.Write(base+".idx", ix.String())
}

// A zlib bomb in a pack file: a blob whose header declares 10 bytes and
// whose stream inflates to 128 MiB. go-git would inflate it whole.
func TestMigratePackBomb(t *testing.T) {
	r := newRawStore(t)
	wd := filepath.Join(t.TempDir(), "packed")
	blob := strings.Repeat("b1", 20)
	putPack(t, r.Repo, blob, 10, &filler{n: 128 << 20})
	r.project("packed", wd, r.Put("tree", gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: blob})))

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
	want := "stream is longer than the 10 bytes its header declares"
	if rep.SnapshotsImported != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], want) || strings.Contains(rep.Errors[0], "\n") {
		t.Errorf("imported %d, errors %q; want one line with %q", rep.SnapshotsImported, rep.Errors, want)
	}
}
