package scan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"weak"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/testtree"
)

// firstEntry returns a weak pointer to the first node of the directory
// rel (a child of the root) of the listing: the start of the one
// allocation that holds its nodes.
func firstEntry(t *testing.T, l *Listing, rel string) weak.Pointer[node] {
	t.Helper()
	for _, c := range l.top.dir.children {
		if c.name == rel {
			return weak.Make(c.dir.children[0])
		}
	}
	t.Fatalf("no directory %s listed", rel)
	return weak.Pointer[node]{}
}

// TestScanFreesEachDirectoryOnceBuilt: a scan without KeepTree drops a
// directory's nodes once its tree is stored, while the files of
// directories after it are still to be read; one with KeepTree (a
// restore's) keeps them, and only it answers Stamp.
func TestScanFreesEachDirectoryOnceBuilt(t *testing.T) {
	dir := t.TempDir()
	tree := testtree.Tree{"z/last.txt": {Data: "read after a's tree is built"}}
	filesIn(tree, "a", 4)
	testtree.Write(t, dir, tree)
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprint("KeepTree=", keep), func(t *testing.T) {
			l, err := List(context.Background(), dir, Options{KeepTree: keep})
			if err != nil {
				t.Fatal(err)
			}
			aNodes := firstEntry(t, l, "a")
			aBuilt := make(chan struct{})
			var freedBeforeLastRead bool
			testHook = func(point, rel string) {
				switch {
				case point == "built" && rel == "a":
					close(aBuilt)
				case point == "open" && rel == "z/last.txt":
					<-aBuilt // a's files are all read: they come first
					for i := 0; i < 100 && aNodes.Value() != nil; i++ {
						runtime.GC() // the last of a's hashers may still be returning
					}
					freedBeforeLastRead = aNodes.Value() == nil
				}
			}
			t.Cleanup(func() { testHook = nil })
			res, err := l.Store(castest.NewMemory(), nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if freedBeforeLastRead == keep {
				t.Errorf("a's nodes freed before z/last.txt was read: %v", freedBeforeLastRead)
			}
			if res.Files != 5 {
				t.Errorf("%d files counted, want 5", res.Files)
			}
			if _, ok := res.Stamp("a/f1"); ok != keep {
				t.Errorf("Stamp(a/f1) found: %v", ok)
			}
		})
	}
}

// failOn fails the store of a blob whose content is bad, as a full disk
// would, and stores the rest in m.
type failOn struct {
	m   *castest.Memory
	bad []byte
}

func (p failOn) Put(ctx context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	if bytes.Equal(data, p.bad) {
		return cas.ID{}, &os.PathError{Op: "write", Path: "pack", Err: syscall.ENOSPC}
	}
	return p.m.Put(ctx, kind, data)
}

// TestScanStopsWhenReadingStops: when the reading of the files stops half
// way, by a store error or a cancelled context, the scan returns the
// error: the trees' building, waiting for the files of a directory never
// read, is stopped with it.
func TestScanStopsWhenReadingStops(t *testing.T) {
	dir := t.TempDir()
	tree := testtree.Tree{"a/0.txt": {Data: "cannot be stored"}}
	filesIn(tree, "b", 8)
	testtree.Write(t, dir, tree)
	_, err := Scan(context.Background(), dir, failOn{castest.NewMemory(), []byte("cannot be stored")}, Options{Workers: 1})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a store failing on a/0.txt: %v; want the scan to fail with ENOSPC", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setHook(t, "open", "b/f2", cancel)
	_, err = Scan(ctx, dir, castest.NewMemory(), Options{Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a scan cancelled while reading b/f2: %v; want context.Canceled", err)
	}
}
