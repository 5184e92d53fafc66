package casckpt

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/index"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/restorer"
	"github.com/casckpt/casckpt/internal/testtree"
)

// faults fails the n-th file system operation of the store (counting from
// 1, across pack and project writes) with EIO, as a failing disk would;
// n = 0 fails none. It is safe for concurrent use.
type faults struct {
	n     int64
	calls atomic.Int64
	mu    sync.Mutex
	what  string // the operation that failed

	// kill makes the n-th operation kill the process with SIGKILL instead:
	// before the operation when delay is negative, else delay after it.
	kill  bool
	delay time.Duration

	// record makes it note the kind of every operation in kinds, in order:
	// the operation and whether it is on a pack or the project.
	record bool
	kinds  []string
}

func (f *faults) hit(op, name string) error {
	if f.record {
		kind := op + " (project)"
		if filepath.IsAbs(name) {
			kind = op + " (packs)"
		}
		f.mu.Lock()
		f.kinds = append(f.kinds, kind)
		f.mu.Unlock()
	}
	if f.calls.Add(1) != f.n {
		return nil
	}
	if f.kill {
		if f.delay < 0 {
			killSelf()
		}
		time.AfterFunc(f.delay, killSelf)
		return nil
	}
	f.mu.Lock()
	f.what = op + " " + filepath.Base(name)
	f.mu.Unlock()
	return &fs.PathError{Op: op, Path: name, Err: syscall.EIO}
}

// killSelf ends the process as a crash would: no deferred call runs, no
// file is closed.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill() // SIGKILL on Unix
	}
	select {} // until the signal lands
}

func (f *faults) fired() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.what
}

// install puts f between s and the disk: under the local pack store's
// files and the project's, and before the database's commits (inline
// packs are written there), until uninstall.
func (f *faults) install(s *Store) {
	index.CommitHook = func(path string) error { return f.hit("commit", path) }
	s.repo.SetPacks(packstore.NewLocal(s.repo.PacksDir(), faultyPacks{packstore.OS, f}))
	s.projectFS = func(r *os.Root) restorer.FS { return faultyProject{restorer.RootFS(r), f} }
}

type faultyPacks struct {
	packstore.FS
	f *faults
}

func (p faultyPacks) Create(name string) (packstore.File, error) {
	if err := p.f.hit("create", name); err != nil {
		return nil, err
	}
	file, err := p.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return faultyFile{file, p.f, name}, nil
}

func (p faultyPacks) Rename(a, b string) error {
	if err := p.f.hit("rename", a); err != nil {
		return err
	}
	return p.FS.Rename(a, b)
}

func (p faultyPacks) Remove(name string) error {
	if err := p.f.hit("remove", name); err != nil {
		return err
	}
	return p.FS.Remove(name)
}

func (p faultyPacks) SyncDir(dir string) error {
	if err := p.f.hit("syncdir", dir); err != nil {
		return err
	}
	return p.FS.SyncDir(dir)
}

// faultyFile fails writes, syncs and closes of pack and project
// files.
type faultyFile struct {
	file interface {
		Write([]byte) (int, error)
		Sync() error
		Close() error
	}
	f    *faults
	name string
}

func (ff faultyFile) Write(b []byte) (int, error) {
	if err := ff.f.hit("write", ff.name); err != nil {
		return 0, err
	}
	return ff.file.Write(b)
}

func (ff faultyFile) Sync() error {
	if err := ff.f.hit("sync", ff.name); err != nil {
		return err
	}
	return ff.file.Sync()
}

func (ff faultyFile) Close() error {
	err := ff.f.hit("close", ff.name)
	if cerr := ff.file.Close(); err == nil {
		err = cerr
	}
	return err
}

type faultyProject struct {
	restorer.FS
	f *faults
}

func (p faultyProject) CreateTemp(dir string, perm fs.FileMode) (restorer.File, string, error) {
	if err := p.f.hit("open", dir); err != nil {
		return nil, "", err
	}
	file, name, err := p.FS.CreateTemp(dir, perm)
	if err != nil {
		return nil, "", err
	}
	return faultyFile{file, p.f, name}, name, nil
}

func (p faultyProject) Open(name string) (restorer.File, error) {
	if err := p.f.hit("open", name); err != nil {
		return nil, err
	}
	file, err := p.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return faultyFile{file, p.f, name}, nil
}

func (p faultyProject) Remove(name string) error {
	if err := p.f.hit("remove", name); err != nil {
		return err
	}
	return p.FS.Remove(name)
}

func (p faultyProject) Mkdir(name string, perm fs.FileMode) error {
	if err := p.f.hit("mkdir", name); err != nil {
		return err
	}
	return p.FS.Mkdir(name, perm)
}

func (p faultyProject) Symlink(target, name string) error {
	if err := p.f.hit("symlink", name); err != nil {
		return err
	}
	return p.FS.Symlink(target, name)
}

func (p faultyProject) Lstat(name string) (fs.FileInfo, error) {
	if err := p.f.hit("lstat", name); err != nil {
		return nil, err
	}
	return p.FS.Lstat(name)
}

func (p faultyProject) Readlink(name string) (string, error) {
	if err := p.f.hit("readlink", name); err != nil {
		return "", err
	}
	return p.FS.Readlink(name)
}

func (p faultyProject) Rename(a, b string) error {
	if err := p.f.hit("rename", a); err != nil {
		return err
	}
	return p.FS.Rename(a, b)
}

// faultTrees are the states of the project: snapshots are taken of A, B, D
// and E (four packs, so gc merges them), and the working tree is left at C;
// an undo goes on from C through the trees of undoTrees.
func faultTrees() map[string]testtree.Tree {
	rng := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 400<<10) // two chunks or more
	for i := range big {
		big[i] = byte(rng.IntN(256))
	}
	a := testtree.Tree{
		"README.md":  {Data: "v1\n"},
		"src/a.go":   {Data: "package a\n"},
		"src/link":   {Link: "a.go"},
		"bin/run.sh": {Data: "#!/bin/sh\n", Exec: true},
		"big.bin":    {Data: string(big)},
		"gone/x.txt": {Data: "x\n"},
		"private.md": {Data: "v1\n"},
	}
	big2 := bytes.Clone(big)
	copy(big2[200<<10:], "an edit in the middle")
	b := testtree.Edit(a, testtree.Tree{"src/a.go": {Data: "package a\n// b\n"}, "new.txt": {Data: "new\n"}, "big.bin": {Data: string(big2)}}, "README.md")
	d := testtree.Edit(b, testtree.Tree{"d.txt": {Data: "d\n"}})
	e := testtree.Edit(d, testtree.Tree{"e.txt": {Data: "e\n"}})
	c := testtree.Edit(a, testtree.Tree{
		"src/a.go":   {Data: "package a\n// c\n"},
		"src/link":   {Link: "elsewhere"},
		"bin/run.sh": {Data: "#!/bin/sh\n"},
		"docs/x.md":  {Data: "docs\n"},
		"big.bin":    {Data: string(big2) + "tail"},
	}, "gone/x.txt")
	trees := map[string]testtree.Tree{"A": a, "B": b, "C": c, "D": d, "E": e}
	maps.Copy(trees, undoTrees(c))
	// In C, a person's private.md is ignored now: a snapshot lacks it, but
	// a restore to A captures it in its pre-restore snapshot, then writes
	// A's over it.
	trees["C"] = testtree.Edit(c, testtree.Tree{".gitignore": {Data: "private.md\n"}, "private.md": {Data: "mine\n"}})
	return trees
}

// undoTrees are the states of an undo's project, from C on: a turn starts
// on TS (C with a text file of ten lines) and ends on TE, having changed a
// line of that file, rewritten, re-linked and made executable files, made a
// directory of two files and deleted README.md and a directory; then a
// person edits another line of the text file and adds a file, leaving the
// project at TW. Undoing the turn gives TU: TS with the person's work
// kept, the text file merged. A safe restore of TS gives TR: TS with the
// person's file and text file kept as they are.
func undoTrees(c testtree.Tree) map[string]testtree.Tree {
	ten := func(edits map[int]string) string {
		var b strings.Builder
		for i := 1; i <= 10; i++ {
			line, ok := edits[i]
			if !ok {
				line = "line " + strconv.Itoa(i)
			}
			b.WriteString(line + "\n")
		}
		return b.String()
	}
	big := []byte(c["big.bin"].Data)
	copy(big[100<<10:], "the agent's edit")
	ts := testtree.Edit(c, testtree.Tree{"notes.txt": {Data: ten(nil)}})
	te := testtree.Edit(ts, testtree.Tree{
		"notes.txt":           {Data: ten(map[int]string{2: "agent"})},
		"src/a.go":            {Data: "package a\n// agent\n"},
		"src/link":            {Link: "a.go"},
		"bin/run.sh":          {Data: "#!/bin/sh\n", Exec: true},
		"big.bin":             {Data: string(big)},
		"agent/new.txt":       {Data: "new\n"},
		"agent/deep/more.txt": {Data: "more\n"},
	}, "README.md", "docs/x.md")
	mine := testtree.Entry{Data: "mine\n"}
	tw := testtree.Edit(te, testtree.Tree{"mine.txt": mine, "notes.txt": {Data: ten(map[int]string{2: "agent", 9: "person"})}})
	tu := testtree.Edit(ts, testtree.Tree{"mine.txt": mine, "notes.txt": {Data: ten(map[int]string{9: "person"})}})
	tr := testtree.Edit(ts, testtree.Tree{"mine.txt": mine, "notes.txt": tw["notes.txt"]})
	return map[string]testtree.Tree{"TS": ts, "TE": te, "TW": tw, "TU": tu, "TR": tr}
}

// faultFixture is a store with snapshots of A, B, D, E and a project
// directory at C.
type faultFixture struct {
	s     *Store
	dir   string
	trees map[string]testtree.Tree
	snaps map[cas.ID]testtree.Tree // every snapshot the store must keep intact
	idA   cas.ID
	idTS  cas.ID // the start of turn t1, once runTurn took it
	// unreadable is the state of the file withUnreadable added.
	unreadable unreadableFile
}

// newFaultFixture opens a store at store and snapshots the trees A, B,
// D and E into it from a new project, which it leaves at C.
func newFaultFixture(t *testing.T, trees map[string]testtree.Tree, store string) *faultFixture {
	ctx := context.Background()
	s, err := Open(store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fx := &faultFixture{s: s, dir: t.TempDir(), trees: trees, snaps: map[cas.ID]testtree.Tree{}}
	for _, name := range []string{"A", "B", "D", "E", "C"} {
		setTree(t, fx.dir, trees[name])
		if name == "C" {
			break
		}
		r, err := s.Snapshot(ctx, fx.dir, SnapshotOptions{Reason: name})
		if err != nil || !r.Created {
			t.Fatalf("snapshot %s: %+v %v", name, r, err)
		}
		fx.snaps[r.ID] = trees[name]
		if name == "A" {
			fx.idA = r.ID
		}
	}
	return fx
}

// setTree makes dir hold exactly tree.
func setTree(t *testing.T, dir string, tree testtree.Tree) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	testtree.Write(t, dir, tree)
}

func (fx *faultFixture) export(t *testing.T, id cas.ID) testtree.Tree {
	t.Helper()
	return exportTree(t, fx.s, fx.dir, id)
}

// checkIntact fails unless verify is clean, every snapshot recorded before
// is listed and exports exactly, and no temporary pack is left. It returns
// the snapshots listed that were not known before.
func (fx *faultFixture) checkIntact(t *testing.T) []cas.ID {
	t.Helper()
	ctx := context.Background()
	v, err := fx.s.Verify(ctx)
	if err != nil || len(v.Damaged) > 0 {
		t.Fatalf("verify: %+v %v", v.Damaged, err)
	}
	list, err := fx.s.List(ctx, fx.dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[cas.ID]bool{}
	var fresh []cas.ID
	for _, e := range list {
		listed[e.ID] = true
		if _, known := fx.snaps[e.ID]; !known {
			fresh = append(fresh, e.ID)
		}
	}
	for id, want := range fx.snaps {
		if !listed[id] {
			t.Fatalf("snapshot %s was lost", id.Short())
		}
		if diff := testtree.Equal(testtree.WithDirs(want), fx.export(t, id)); diff != "" {
			t.Fatalf("snapshot %s no longer exports exactly: %s", id.Short(), diff)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(fx.s.repo.PacksDir(), packstore.TempPrefix+"*")); len(left) > 0 {
		t.Fatalf("temporary packs left: %v", left)
	}
	return fresh
}

// packNames lists the pack files of s.
func packNames(t *testing.T, s *Store) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(s.repo.PacksDir(), "*"+cas.PackSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// checkFailure fails unless err is the injected EIO, on one line.
func checkFailure(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("failed %s: got %v, want the injected EIO", what, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("failed %s: the message is not one line: %q", what, err)
	}
}

// TestIOErrorsAtEveryWrite fails, for each of snapshot (also one that
// commits in parts, as a big one does), gc, restore, undo and safe
// restore, every file system operation in turn with EIO (every
// create, write, sync, close, rename, removal and directory sync of packs
// and of the project, and every lstat and readlink by which a restore
// checks a path right before it changes it): the error is reported, no
// snapshot is lost or
// damaged, a failed restore or undo leaves each file old or new, and with
// the disk healthy again the same operation succeeds.
func TestIOErrorsAtEveryWrite(t *testing.T) {
	ctx := context.Background()
	trees := faultTrees()
	inParts := snapshotFaults(ctx)
	inParts.name = "snapshot in parts"
	for _, op := range []faultedOp{snapshotFaults(ctx), inParts, foldFaults(ctx), gcFaults(ctx), restoreFaults(ctx), undoFaults(ctx), safeRestoreFaults(ctx)} {
		t.Run(op.name, func(t *testing.T) {
			switch op.name {
			case "snapshot":
				FilePacksOnly(t) // its pack file's every operation; the fold's has the inline path's
			case "snapshot in parts": // a big snapshot's commit ahead of its record
				FilePacksOnly(t)
				CommitAheadPast(t, 2, 1)
			case "fold":
				InlineUpTo(t, 1<<20) // the tree's large file too
			}
			failEachOperation(t, trees, op)
		})
	}
}

// TestIOErrorsWithUnreadable is TestIOErrorsAtEveryWrite for snapshot,
// restore, undo and safe restore over a project that also holds a file
// the user cannot read (mode 000): after every injected fault, and after
// the healthy rerun, it is exactly as it was (bytes, mode, inode and
// modification time), and the sweep's other checks hold for the rest of
// the tree. Run as nobody where the tests run as root.
func TestIOErrorsWithUnreadable(t *testing.T) {
	if !testtree.AsUnprivileged(t) {
		return
	}
	ctx := context.Background()
	trees := faultTrees()
	ops := []faultedOp{snapshotFaults(ctx), restoreFaults(ctx), undoFaults(ctx), safeRestoreFaults(ctx)}
	if testing.Short() {
		ops = ops[:2]
	}
	FilePacksOnly(t) // the snapshot's pack file's every operation
	for _, op := range ops {
		// Every operation of the snapshot (it makes 6), every eighth of
		// the restores and the undo (each makes about 70):
		// TestIOErrorsAtEveryWrite fails each of them without the file,
		// and this sweep costs an eighth of its time.
		if op.name != "snapshot" {
			op.stride = 8
		}
		t.Run(op.name, func(t *testing.T) { failEachOperation(t, trees, withUnreadable(op)) })
	}
}

// unreadableName and unreadableData are the file withUnreadable adds.
const (
	unreadableName = "locked.bin"
	unreadableData = "not for anyone to read\n"
)

// withUnreadable is op over a project that, once op is prepared, also
// holds unreadableName with mode 000. Before each check it makes sure the
// file is as it was, then moves it out of the project (a rename: the same
// inode and times) while op's own check reads the tree, and back.
func withUnreadable(op faultedOp) faultedOp {
	prepare := op.prepare
	op.prepare = func(t *testing.T, fx *faultFixture) {
		if prepare != nil {
			prepare(t, fx)
		}
		p := filepath.Join(fx.dir, unreadableName)
		if err := os.WriteFile(p, []byte(unreadableData), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		fx.unreadable = unreadableState(t, p)
	}
	aside := func(t *testing.T, fx *faultFixture, what string, check func()) {
		p := filepath.Join(fx.dir, unreadableName)
		if got := unreadableState(t, p); got != fx.unreadable {
			t.Fatalf("%s (%s) changed %s, which the user cannot read: %+v, was %+v", op.name, what, unreadableName, got, fx.unreadable)
		}
		out := filepath.Join(filepath.Dir(fx.dir), filepath.Base(fx.dir)+"-"+unreadableName)
		if err := os.Rename(p, out); err != nil {
			t.Fatal(err)
		}
		check()
		if err := os.Rename(out, p); err != nil {
			t.Fatal(err)
		}
	}
	check, again := op.check, op.again
	op.check = func(t *testing.T, fx *faultFixture, err error, what string) {
		aside(t, fx, what, func() { check(t, fx, err, what) })
	}
	op.again = func(t *testing.T, fx *faultFixture) {
		aside(t, fx, "run again with the disk healthy", func() { again(t, fx) })
	}
	return op
}

// unreadableFile is what withUnreadable checks of its file: the mode, inode
// and modification time, and the bytes, read with the mode lifted for a
// moment (chmod changes neither).
type unreadableFile struct {
	mode  fs.FileMode
	ino   uint64
	mtime time.Time
	data  string
}

func unreadableState(t *testing.T, p string) unreadableFile {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := osfs.FromInfo(info)
	s := unreadableFile{mode: info.Mode(), ino: st.Ino, mtime: info.ModTime()}
	if info.Mode() != 0 {
		return s
	}
	if err := os.Chmod(p, 0o400); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s.data = string(b)
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// faultedOp is an operation whose file system operations are failed in
// turn, with what must hold after each failure and after a healthy rerun.
type faultedOp struct {
	name    string
	prepare func(t *testing.T, fx *faultFixture)
	run     func(fx *faultFixture) error
	check   func(t *testing.T, fx *faultFixture, err error, what string) // after the faulty run
	again   func(t *testing.T, fx *faultFixture)                         // after a healthy run
	// stride, when above the run's own (testtree.Size), fails only the
	// first operation of each kind, the last and every stride-th.
	stride int
}

// snapshotFaults: a failed snapshot records nothing; once the disk is
// healthy it records the tree.
func snapshotFaults(ctx context.Context) faultedOp {
	return faultedOp{
		name: "snapshot",
		run: func(fx *faultFixture) error {
			_, err := fx.s.Snapshot(ctx, fx.dir, SnapshotOptions{Reason: "C"})
			return err
		},
		check: func(t *testing.T, fx *faultFixture, err error, what string) {
			fresh := fx.checkIntact(t)
			if err != nil && len(fresh) > 0 {
				t.Fatalf("a failed snapshot (%s) was recorded", what)
			}
			if err == nil && len(fresh) != 1 {
				t.Fatalf("snapshot reported success (%s) but %d were recorded", what, len(fresh))
			}
		},
		again: func(t *testing.T, fx *faultFixture) {
			fresh := fx.checkIntact(t)
			if len(fresh) != 1 {
				t.Fatalf("%d new snapshots, want 1", len(fresh))
			}
			if diff := testtree.Equal(testtree.WithDirs(testtree.Edit(fx.trees["C"], nil, "private.md")), fx.export(t, fresh[0])); diff != "" {
				t.Fatalf("the snapshot taken once the disk recovered: %s", diff)
			}
		},
	}
}

// foldFaults: a turn's snapshot, its pack inline, then a fold of the
// inline packs into a pack file (the pack file's operations and the
// database's commits in the path): a failed fold leaves the store
// intact and its inline packs where they were; one once the disk
// recovered leaves none, the snapshot whole.
func foldFaults(ctx context.Context) faultedOp {
	op := snapshotFaults(ctx)
	op.name = "fold"
	snapshot := op.run
	op.prepare = func(t *testing.T, fx *faultFixture) {
		if err := snapshot(fx); err != nil {
			t.Fatal(err)
		}
		if n := InlinePacks(t, fx.s); n == 0 {
			t.Fatal("the snapshot stored no inline pack")
		}
	}
	snapshotCheck, snapshotAgain := op.check, op.again
	op.run = func(fx *faultFixture) error {
		ss, err := fx.s.begin(ctx, false, false)
		if err != nil {
			return err
		}
		defer ss.End()
		return ss.foldInline(ctx)
	}
	op.check = func(t *testing.T, fx *faultFixture, err error, what string) {
		snapshotCheck(t, fx, nil, what)
		if err != nil && InlinePacks(t, fx.s) == 0 {
			t.Fatalf("a failed fold (%s) left no inline pack", what)
		}
	}
	op.again = func(t *testing.T, fx *faultFixture) {
		snapshotAgain(t, fx)
		if n := InlinePacks(t, fx.s); n != 0 {
			t.Fatalf("%d inline packs after a fold", n)
		}
	}
	return op
}

// gcFaults: a failed gc changes no snapshot; a healthy one leaves exactly
// the packs the index names.
func gcFaults(ctx context.Context) faultedOp {
	return faultedOp{
		name: "gc",
		prepare: func(t *testing.T, fx *faultFixture) {
			if _, err := fx.s.Forget(ctx, fx.dir, Ref(fx.idA.String())); err != nil {
				t.Fatal(err)
			}
			delete(fx.snaps, fx.idA)
		},
		run: func(fx *faultFixture) error {
			_, err := fx.s.GC(ctx)
			return err
		},
		check: func(t *testing.T, fx *faultFixture, err error, what string) {
			if fresh := fx.checkIntact(t); len(fresh) > 0 {
				t.Fatalf("gc (%s) made snapshots appear: %v", what, fresh)
			}
		},
		again: func(t *testing.T, fx *faultFixture) {
			fx.checkIntact(t)
			// The healthy gc finished the work: nothing is left to collect,
			// and the pack files are exactly those the index names.
			if res, err := fx.s.GC(ctx); err != nil || res.ObjectsDeleted != 0 {
				t.Fatalf("a second gc still found garbage: %+v %v", res, err)
			}
			var indexed []string
			fx.s.read(ctx, func(v view) error {
				packs, err := v.Tx.Objects().Packs()
				for _, p := range packs {
					indexed = append(indexed, filepath.Join(fx.s.repo.PacksDir(), p.FileName()))
				}
				return err
			})
			slices.Sort(indexed)
			if onDisk := packNames(t, fx.s); !slices.Equal(onDisk, indexed) {
				t.Fatalf("pack files %q, the index names %q", onDisk, indexed)
			}
		},
	}
}

// restoreFaults: a failed restore leaves every file old or new and no
// temporary file; a healthy one restores the tree.
func restoreFaults(ctx context.Context) faultedOp {
	return faultedOp{
		name: "restore",
		run: func(fx *faultFixture) error {
			_, err := fx.s.Restore(ctx, fx.dir, Ref(fx.idA.String()), RestoreOptions{})
			return err
		},
		check: func(t *testing.T, fx *faultFixture, err error, what string) {
			fx.checkOldOrNew(t, "restore", err, what, fx.trees["C"], fx.trees["A"])
		},
		again: func(t *testing.T, fx *faultFixture) {
			fx.checkIntact(t)
			if diff := testtree.Equal(testtree.WithDirs(fx.trees["A"]), testtree.Read(t, fx.dir)); diff != "" {
				t.Fatalf("restore once the disk recovered: %s", diff)
			}
		},
	}
}

// undoFaults: undo of a turn that rewrote, re-linked, made executable,
// created and deleted files and directories, with a person's edit since
// (merged) and a file of theirs (kept). A failed undo leaves every file
// old or new and no temporary file, and its pre-undo snapshot, if
// recorded, holds the tree from before; a healthy one, run on whatever
// the failed one left, gives the undone tree.
func undoFaults(ctx context.Context) faultedOp {
	return faultedOp{
		name:    "undo",
		prepare: runTurn,
		run: func(fx *faultFixture) error {
			_, err := fx.s.Undo(ctx, fx.dir, "t1", UndoOptions{})
			return err
		},
		check: func(t *testing.T, fx *faultFixture, err error, what string) {
			fx.checkOldOrNew(t, "undo", err, what, fx.trees["TW"], fx.trees["TU"])
		},
		again: func(t *testing.T, fx *faultFixture) {
			fx.checkIntact(t)
			if diff := testtree.Equal(testtree.WithDirs(fx.trees["TU"]), testtree.Read(t, fx.dir)); diff != "" {
				t.Fatalf("undo once the disk recovered: %s", diff)
			}
		},
	}
}

// safeRestoreFaults: a safe restore to the start of a turn that rewrote,
// re-linked, made executable, created and deleted files and directories,
// over a person's later edit of a file the turn changed and a file of
// theirs (both kept). A failed one leaves every file old or new and no
// temporary file, and its pre-restore snapshot, if recorded, holds the
// tree from before; a healthy one, run on whatever the failed one left,
// restores what the agent did and keeps the person's two files.
func safeRestoreFaults(ctx context.Context) faultedOp {
	return faultedOp{
		name:    "restore-safe",
		prepare: runTurn,
		run: func(fx *faultFixture) error {
			_, err := fx.s.Restore(ctx, fx.dir, Ref(fx.idTS.String()), RestoreOptions{Safe: true})
			return err
		},
		check: func(t *testing.T, fx *faultFixture, err error, what string) {
			fx.checkOldOrNew(t, "safe restore", err, what, fx.trees["TW"], fx.trees["TR"])
		},
		again: func(t *testing.T, fx *faultFixture) {
			fx.checkIntact(t)
			if diff := testtree.Equal(testtree.WithDirs(fx.trees["TR"]), testtree.Read(t, fx.dir)); diff != "" {
				t.Fatalf("safe restore once the disk recovered: %s", diff)
			}
			res, err := fx.s.Restore(ctx, fx.dir, Ref(fx.idTS.String()), RestoreOptions{Safe: true, DryRun: true})
			want := []KeptPath{{"mine.txt", "not changed by an agent since the snapshot"}, {"notes.txt", "changed since the agent's last write"}}
			if err != nil || !res.Safe || res.Written+res.Deleted != 0 || !slices.Equal(res.Kept, want) {
				t.Fatalf("a safe restore again: %+v %v, want nothing to do and %v kept", res, err, want)
			}
		},
	}
}

// runTurn records turn t1 in fx's project: it takes snapshots of TS
// (starting it) and TE (ending it), and leaves the project at TW.
func runTurn(t *testing.T, fx *faultFixture) {
	for _, name := range []string{"TS", "TE"} {
		setTree(t, fx.dir, fx.trees[name])
		r, err := fx.s.Snapshot(context.Background(), fx.dir, SnapshotOptions{Reason: name, Turn: "t1", EndTurn: name == "TE"})
		if err != nil || !r.Created {
			t.Fatalf("snapshot %s: %+v %v", name, r, err)
		}
		fx.snaps[r.ID] = fx.trees[name]
		if name == "TS" {
			fx.idTS = r.ID
		}
	}
	setTree(t, fx.dir, fx.trees["TW"])
}

// checkOldOrNew checks the project after op (a restore or an undo) from
// tree old to tree new failed with err (or did not) when what failed: no
// snapshot is lost, a snapshot it recorded holds old, every path is old or
// new and none is a temporary file, and a success left exactly new.
func (fx *faultFixture) checkOldOrNew(t *testing.T, op string, err error, what string, old, new testtree.Tree) {
	t.Helper()
	for _, id := range fx.checkIntact(t) {
		if diff := testtree.Equal(testtree.WithDirs(old), fx.export(t, id)); diff != "" {
			t.Fatalf("the snapshot taken before the %s (%s): %s", op, what, diff)
		}
	}
	old, new = testtree.WithDirs(old), testtree.WithDirs(new)
	got := testtree.Read(t, fx.dir)
	if err == nil && testtree.Equal(new, got) != "" {
		t.Fatalf("%s reported success (%s) but the tree differs: %s", op, what, testtree.Equal(new, got))
	}
	for p, e := range got {
		if strings.Contains(p, ".casckpt-") {
			t.Fatalf("%s (%s) left %s", op, what, p)
		}
		if o, ok := old[p]; ok && o == e {
			continue
		}
		if n, ok := new[p]; ok && n == e {
			continue
		}
		t.Fatalf("after a failed %s (%s) %s is neither old nor new", op, what, p)
	}
	for p := range old {
		if _, ok := got[p]; !ok {
			if _, inNew := new[p]; inNew {
				t.Fatalf("after a failed %s (%s) %s is missing", op, what, p)
			}
		}
	}
}

// failEachOperation runs op once per file system operation it makes,
// failing that operation with EIO, and checks each outcome. A healthy run
// first counts the operations; the default run fails the first operation
// of each kind, the last, and every stride-th between (testtree.Size),
// the soak (CASCKPT_SOAK=1) each one.
func failEachOperation(t *testing.T, trees map[string]testtree.Tree, op faultedOp) {
	counted := runFaulty(t, trees, op, &faults{record: true})
	if counted.what != "" || counted.err != nil {
		t.Fatalf("no fault injected, yet: %v", counted.err)
	}
	if len(counted.f.kinds) < 5 {
		t.Fatalf("only %d operations: the faults are not in the path", len(counted.f.kinds))
	}
	points := faultPoints(counted.f.kinds, max(op.stride, testtree.Size(8, 4, 1)))
	var swallowed []string
	for _, n := range points {
		fx := runFaulty(t, trees, op, &faults{n: n})
		if fx.what == "" { // fewer operations this time: nothing failed
			if fx.err != nil {
				t.Fatalf("no fault injected, yet: %v", fx.err)
			}
			continue
		}
		if fx.err != nil {
			checkFailure(t, fx.err, fx.what)
		} else {
			swallowed = append(swallowed, fx.what)
		}
		op.check(t, fx.faultFixture, fx.err, fx.what)
		fx.f.n = 0 // the disk is healthy again
		if err := op.run(fx.faultFixture); err != nil {
			t.Fatalf("after a failed %s (%s), with the disk healthy: %v", op.name, fx.what, err)
		}
		op.again(t, fx.faultFixture)
	}
	if len(swallowed) > 0 {
		t.Fatalf("failures the %s did not report: %q", op.name, swallowed)
	}
	t.Logf("%d of its %d operations failed in turn (every kind of operation), each reported", len(points), len(counted.f.kinds))
}

// faultyRun is one run of a faulted operation on a fresh fixture.
type faultyRun struct {
	*faultFixture
	f    *faults
	err  error
	what string // the operation that failed; "" for none
}

// runFaulty prepares a fresh fixture for op, installs f and runs op.
func runFaulty(t *testing.T, trees map[string]testtree.Tree, op faultedOp, f *faults) faultyRun {
	fx := newFaultFixture(t, trees, filepath.Join(t.TempDir(), "store"))
	if op.prepare != nil {
		op.prepare(t, fx)
	}
	f.install(fx.s)
	t.Cleanup(func() { index.CommitHook = nil })
	err := op.run(fx)
	return faultyRun{fx, f, err, f.fired()}
}

// faultPoints picks, from the kinds of a run's operations in order, which
// to fail (counting from 1): the first of each kind, the last, and every
// stride-th; with stride 1, each.
func faultPoints(kinds []string, stride int) []int64 {
	seen := map[string]bool{}
	var points []int64
	for i, k := range kinds {
		if !seen[k] || i%stride == 0 || i == len(kinds)-1 {
			points = append(points, int64(i+1))
		}
		seen[k] = true
	}
	return points
}
