package packstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/cas/packtest"
)

func TestLocalConformance(t *testing.T) {
	packtest.Run(t, func(t *testing.T) cas.PackStore { return packstore.NewLocal(t.TempDir(), nil) })
}

func TestFaultyLocalConformance(t *testing.T) {
	packtest.Run(t, func(t *testing.T) cas.PackStore {
		return packtest.NewFaulty(packstore.NewLocal(t.TempDir(), nil))
	})
}

// recordFS logs every operation, as "op base-name", and fails the first
// whose log line starts with fail, and the failAt-th (from 1).
type recordFS struct {
	mu     sync.Mutex
	ops    []string
	fail   string
	failAt int
}

func (r *recordFS) hit(op string, names ...string) error {
	for _, n := range names {
		op += " " + filepath.Base(n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
	if (r.fail != "" && strings.HasPrefix(op, r.fail)) || len(r.ops) == r.failAt {
		r.fail = ""
		return &fs.PathError{Op: op, Path: names[0], Err: syscall.EIO}
	}
	return nil
}

func (r *recordFS) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

func (r *recordFS) Create(name string) (packstore.File, error) {
	if err := r.hit("create", name); err != nil {
		return nil, err
	}
	f, err := packstore.OS.Create(name)
	if err != nil {
		return nil, err
	}
	return recordFile{f, r, name}, nil
}

func (r *recordFS) Rename(a, b string) error {
	if err := r.hit("rename", a, b); err != nil {
		return err
	}
	return packstore.OS.Rename(a, b)
}

func (r *recordFS) Remove(name string) error {
	if err := r.hit("remove", name); err != nil {
		return err
	}
	return packstore.OS.Remove(name)
}

func (r *recordFS) SyncDir(dir string) error {
	if err := r.hit("syncdir", dir); err != nil {
		return err
	}
	return packstore.OS.SyncDir(dir)
}

type recordFile struct {
	f    packstore.File
	r    *recordFS
	name string
}

func (f recordFile) Write(b []byte) (int, error) {
	if err := f.r.hit("write", f.name); err != nil {
		return 0, err
	}
	return f.f.Write(b)
}

func (f recordFile) Sync() error {
	if err := f.r.hit("sync", f.name); err != nil {
		return err
	}
	return f.f.Sync()
}

func (f recordFile) Close() error {
	err := f.r.hit("close", f.name)
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// files lists the directory's file names.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestLocalWriteOrder: temp file in the directory, write, fsync, close,
// rename; the directory is fsynced by Sync, once for many packs.
func TestLocalWriteOrder(t *testing.T) {
	ctx := context.Background()
	dir, rec := t.TempDir(), &recordFS{}
	s := packstore.NewLocal(dir, rec)
	var names []string
	for range 2 {
		name := packtest.NewName()
		names = append(names, name)
		w, err := s.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("pack bytes")); err != nil {
			t.Fatal(err)
		}
		temp := packstore.TempPrefix + strings.TrimSuffix(name, cas.PackSuffix)
		if got := files(t, dir); !slices.Contains(got, temp) || slices.Contains(got, name) {
			t.Fatalf("while writing, the directory holds %q; want %s and not %s", got, temp, name)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range names {
		temp := packstore.TempPrefix + strings.TrimSuffix(name, cas.PackSuffix)
		want = append(want, "create "+temp, "write "+temp, "sync "+temp, "close "+temp, "rename "+temp+" "+name)
	}
	want = append(want, "syncdir "+filepath.Base(dir))
	if got := rec.log(); !slices.Equal(got, want) {
		t.Fatalf("operations\n%q\nwant\n%q", got, want)
	}
	slices.Sort(names)
	if got := files(t, dir); !slices.Equal(got, names) {
		t.Fatalf("the directory holds %q, want %q", got, names)
	}
	for _, name := range names {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "pack bytes" {
			t.Fatalf("%s holds %q, %v", name, b, err)
		}
	}
}

// TestLocalFaults fails each file operation of writing a pack in turn: the
// error is returned by the call that made it, and no file is left.
func TestLocalFaults(t *testing.T) {
	ctx := context.Background()
	for _, op := range []string{"create", "write", "sync", "close", "rename"} {
		t.Run(op, func(t *testing.T) {
			dir, rec := t.TempDir(), &recordFS{fail: op}
			s := packstore.NewLocal(dir, rec)
			name := packtest.NewName()
			err := func() error {
				w, err := s.Create(ctx, name)
				if err != nil {
					return err
				}
				if _, err := w.Write([]byte("pack bytes")); err != nil {
					w.Abort()
					return err
				}
				return w.Close()
			}()
			if !errors.Is(err, syscall.EIO) {
				t.Fatalf("%s failed: got %v, want EIO", op, err)
			}
			if got := files(t, dir); len(got) != 0 {
				t.Fatalf("a failed %s left %q", op, got)
			}
		})
	}
	t.Run("syncdir", func(t *testing.T) {
		s := packstore.NewLocal(t.TempDir(), &recordFS{fail: "syncdir"})
		if err := s.Sync(ctx); !errors.Is(err, syscall.EIO) {
			t.Fatalf("sync: %v, want EIO", err)
		}
	})
	t.Run("remove", func(t *testing.T) {
		dir := t.TempDir()
		s := packstore.NewLocal(dir, &recordFS{fail: "remove"})
		name := packtest.NewName()
		w, err := s.Create(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Abort(); !errors.Is(err, syscall.EIO) {
			t.Fatalf("abort whose removal fails: %v, want EIO", err)
		}
		if freed, err := s.RemoveIncomplete(ctx); err != nil || freed != 0 || len(files(t, dir)) != 0 {
			t.Fatalf("remove incomplete: %d, %v; left %q", freed, err, files(t, dir))
		}
	})
}

// TestLocalOnDisk: what List skips, where a pack set aside goes, and what
// RemoveIncomplete deletes, in the directory.
func TestLocalOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := packstore.NewLocal(dir, nil)
	pack, damaged := packtest.NewName(), packtest.NewName()
	leftover := packstore.TempPrefix + strings.TrimSuffix(packtest.NewName(), cas.PackSuffix)
	write := map[string]string{
		pack: "pack", damaged: "damaged", leftover: "killed writer's",
		"x.pack": "not a pack name", "README": "other", strings.ToUpper(pack): "upper case",
	}
	for name, data := range write {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetAside(ctx, damaged); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, damaged+packstore.DamagedSuffix)); err != nil || string(b) != "damaged" {
		t.Fatalf("the pack set aside holds %q, %v", b, err)
	}
	var listed []cas.StoredPack
	if err := s.List(ctx, func(p cas.StoredPack) error { listed = append(listed, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(listed, []cas.StoredPack{{Name: pack, Size: 4}}) {
		t.Fatalf("listed %+v", listed)
	}
	freed, err := s.RemoveIncomplete(ctx)
	if err != nil || freed != int64(len(write[leftover])) {
		t.Fatalf("remove incomplete: %d bytes freed, %v; want %d", freed, err, len(write[leftover]))
	}
	want := []string{pack, damaged + packstore.DamagedSuffix, "x.pack", "README", strings.ToUpper(pack)}
	slices.Sort(want)
	if got := files(t, dir); !slices.Equal(got, want) {
		t.Fatalf("the directory holds %q, want %q", got, want)
	}
}

// TestLocalTwoWriters: two stores on one directory (two processes) never
// both write one name, and neither replaces the other's pack.
func TestLocalTwoWriters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := packstore.NewLocal(dir, nil), packstore.NewLocal(dir, nil)
	name := packtest.NewName()
	wa, err := a.Create(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, name); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second writer while the first is at work: %v, want an error matching fs.ErrExist", err)
	}
	if _, err := wa.Write([]byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := wa.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, name); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a writer of a pack that exists: %v, want an error matching fs.ErrExist", err)
	}
	// A pack that appears while a writer is at work is not replaced.
	other := packtest.NewName()
	wb, err := b.Create(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, other), []byte("theirs"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Write([]byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := wb.Close(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("close when the pack appeared meanwhile: %v, want an error matching fs.ErrExist", err)
	}
	for name, want := range map[string]string{name: "first", other: "theirs"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, []byte(want)) {
			t.Fatalf("%s holds %q, %v; want %q", name, got, err, want)
		}
	}
	if got := files(t, dir); len(got) != 2 {
		t.Fatalf("the directory holds %q", got)
	}
}

// TestLocalMissingDir: a store whose directory is missing creates nothing
// and reports the directory missing.
func TestLocalMissingDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "packs")
	s := packstore.NewLocal(dir, nil)
	if _, err := s.Create(ctx, packtest.NewName()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("create: %v", err)
	}
	if err := s.List(ctx, func(cas.StoredPack) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("list: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the directory was made: %v", err)
	}
}

// TestWriterFileFaults fails each file operation of a cas.Writer's packs in
// turn (create, write, sync, close, rename, directory sync): the Writer
// reports the error, Abort leaves no file behind, and a later Writer
// stores every object.
func TestWriterFileFaults(t *testing.T) {
	ctx := context.Background()
	objects := [][]byte{bytes.Repeat([]byte("a"), 2<<20), bytes.Repeat([]byte("b"), 3<<20), []byte("small")}
	put := func(s cas.PackStore) (*cas.Writer, error) {
		w := cas.NewWriter(s, nil)
		for _, o := range objects {
			if _, err := w.Put(ctx, cas.KindChunk, o); err != nil {
				return w, err
			}
		}
		return w, w.Flush(ctx)
	}
	for n := 1; ; n++ {
		dir, rec := t.TempDir(), &recordFS{failAt: n}
		w, err := put(packstore.NewLocal(dir, rec))
		if ops := rec.log(); len(ops) < n { // every operation has been failed once
			if err != nil {
				t.Fatalf("no fault injected, yet: %v", err)
			}
			if n <= 6 {
				t.Fatalf("only %q: too few operations to have covered create, write, sync, close, rename and directory sync", ops)
			}
			break
		}
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("fault at %s: %v, want EIO", rec.log()[n-1], err)
		}
		w.Abort()
		if left := files(t, dir); len(left) != 0 {
			t.Fatalf("fault at %s: %q left after Abort", rec.log()[n-1], left)
		}
		// The store works again once the disk does.
		s := packstore.NewLocal(dir, nil)
		if _, err := put(s); err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, name := range files(t, dir) {
			sp, err := cas.Salvage(ctx, s, name, nil)
			if err != nil || sp.Damaged {
				t.Fatalf("%s after recovery: damaged %v, %v", name, sp.Damaged, err)
			}
			found += len(sp.Entries)
		}
		if found != len(objects) {
			t.Fatalf("%d objects stored after recovery, want %d", found, len(objects))
		}
	}
}
