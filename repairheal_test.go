package casckpt

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/scan"
	"github.com/casckpt/casckpt/internal/testtree"
	"github.com/casckpt/casckpt/manifest"
)

// healFixture is a project with two snapshots: first (v1), then newest
// (v1 and lib/deep/new.txt), which starts turn t1. A small file's chunk
// shares its block with the other small chunks of its snapshot, a tree
// with the other trees and the record backups; dup.txt (in two places)
// and big.bin are large enough to be objects of their own.
type healFixture struct {
	s             *Store
	dir           string
	first, newest cas.ID
	trees         map[cas.ID]testtree.Tree // each snapshot's content
	reach         map[cas.ID][]cas.ID      // each snapshot's trees and chunks
}

func newHealFixture(t *testing.T) *healFixture {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fx := &healFixture{s: s, dir: t.TempDir(), trees: map[cas.ID]testtree.Tree{}, reach: map[cas.ID][]cas.ID{}}
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	dup := random(300 << 10)
	v1 := testtree.Tree{
		"a.txt": {Data: "alpha\n"}, "src/x.go": {Data: "package x\n"}, "src/y.go": {Data: "package y\n"},
		"dup.txt": {Data: dup}, "lib/dup.txt": {Data: dup}, "lib/deep/z.txt": {Data: "zed\n"},
		"big.bin": {Data: random(600 << 10)},
	}
	testtree.Write(t, fx.dir, v1)
	fx.first = fx.take(t, SnapshotOptions{}).ID
	testtree.Write(t, fx.dir, testtree.Tree{"lib/deep/new.txt": {Data: "new\n"}})
	fx.newest = fx.take(t, SnapshotOptions{Session: "s", Turn: "t1"}).ID
	return fx
}

// take snapshots the project and records what the snapshot holds.
func (fx *healFixture) take(t *testing.T, opts SnapshotOptions) SnapshotResult {
	t.Helper()
	r, err := fx.s.Snapshot(context.Background(), fx.dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.trees[r.ID]; !ok {
		fx.trees[r.ID] = testtree.Read(t, fx.dir)
		fx.reach[r.ID] = fx.reachable(t, r.ID)
	}
	return r
}

// reachable returns the trees and chunks of snapshot id; the test fails
// when one of its trees cannot be read.
func (fx *healFixture) reachable(t *testing.T, id cas.ID) []cas.ID {
	t.Helper()
	var out []cas.ID
	root := fx.snap(t, id).Root
	out = append(out, root)
	err := fx.s.read(context.Background(), func(v view) error {
		return manifest.Walk(context.Background(), v.Objects, root, func(_ string, e manifest.Entry) error {
			out = append(out, e.Chunks...)
			if e.Kind == manifest.KindDir {
				out = append(out, e.Tree)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", id.Short(), err)
	}
	return out
}

// where returns the pack file and the entry of object id.
func (fx *healFixture) where(t *testing.T, id cas.ID) (string, cas.PackEntry) {
	t.Helper()
	FoldNow(t, fx.s) // the pack files, out of the database
	var file string
	var e cas.PackEntry
	err := fx.s.read(context.Background(), func(v view) error {
		l, err := v.Tx.Objects().Locate(id)
		if err != nil {
			return err
		}
		p, err := v.Tx.Objects().Pack(l.Pack)
		file, e = filepath.Join(fx.s.repo.PacksDir(), p.FileName()), l.PackEntry
		return err
	})
	if err != nil {
		t.Fatalf("locate %s: %v", id.Short(), err)
	}
	return file, e
}

// damage flips the middle stored byte of object id (or of its block,
// with every other member): the object no longer matches its ID. (The
// last byte of a sweep's block is its zstd checksum, which reads ignore.)
func (fx *healFixture) damage(t *testing.T, id cas.ID) {
	t.Helper()
	file, e := fx.where(t, id)
	header := int64(44) // cas's object header; a block's is 12
	if e.InBlock() {
		header = 12
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b[int64(e.Offset)+header+int64(e.StoredLen)/2] ^= 0xff
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// chunkOf and treeOf return the first chunk of file p, and the tree of
// directory p ("" the root), in snapshot id.
func (fx *healFixture) chunkOf(t *testing.T, id cas.ID, p string) cas.ID {
	return fx.entry(t, id, p).Chunks[0]
}

func (fx *healFixture) treeOf(t *testing.T, id cas.ID, p string) cas.ID {
	if p == "" {
		return fx.snap(t, id).Root
	}
	return fx.entry(t, id, p).Tree
}

func (fx *healFixture) entry(t *testing.T, id cas.ID, p string) manifest.Entry {
	t.Helper()
	var e manifest.Entry
	root := fx.snap(t, id).Root
	err := fx.s.read(context.Background(), func(v view) (err error) {
		e, err = manifest.Lookup(context.Background(), v.Objects, root, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (fx *healFixture) snap(t *testing.T, id cas.ID) record {
	t.Helper()
	var snaps []record
	if err := fx.s.read(context.Background(), func(v view) (err error) {
		snaps, err = v.Tx.Snapshots(fx.dir)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(snaps, func(sn record) bool { return sn.ID == id })
	if i < 0 {
		t.Fatalf("no snapshot %s", id.Short())
	}
	return snaps[i]
}

// indexed returns the IDs of every object the index holds.
func (fx *healFixture) indexed(t *testing.T) map[cas.ID]bool {
	t.Helper()
	out := map[cas.ID]bool{}
	if err := fx.s.read(context.Background(), func(v view) error {
		return v.Tx.Objects().ForEachObject(func(l cas.Location) error { out[l.ID] = true; return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// listed returns the IDs of the project's snapshots.
func (fx *healFixture) listed(t *testing.T) []cas.ID {
	t.Helper()
	list, err := fx.s.List(context.Background(), fx.dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []cas.ID
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

// check compares Verify with what must hold after the repair: a snapshot
// is damaged only when it needs an object that was lost and that no
// snapshot taken since the repair holds (nothing else could bring it
// back), and every other snapshot exports byte for byte what it was taken
// of.
func (fx *healFixture) check(t *testing.T, step string, lost map[cas.ID]bool, since []cas.ID) {
	t.Helper()
	back := map[cas.ID]bool{} // stored again by the snapshots taken since
	for _, id := range since {
		for _, o := range fx.reach[id] {
			back[o] = true
		}
	}
	var want []cas.ID
	for _, id := range fx.listed(t) {
		if slices.ContainsFunc(fx.reach[id], func(o cas.ID) bool { return lost[o] && !back[o] }) {
			want = append(want, id)
		}
	}
	v, err := fx.s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []cas.ID
	for _, d := range v.Damaged {
		got = append(got, d.ID)
	}
	slices.SortFunc(want, func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) })
	slices.SortFunc(got, func(a, b cas.ID) int { return bytes.Compare(a[:], b[:]) })
	got = slices.Compact(got) // a snapshot may be named for its data and for its turn's backup
	if !slices.Equal(got, want) {
		t.Fatalf("%s: verify names %v damaged, want %v: %+v", step, shorts(got), shorts(want), v.Damaged)
	}
	for _, id := range fx.listed(t) {
		if slices.Contains(want, id) {
			continue
		}
		var buf bytes.Buffer
		if err := fx.s.Export(context.Background(), fx.dir, Ref(id.String()), &buf); err != nil {
			t.Fatalf("%s: export %s: %v", step, id.Short(), err)
		}
		if diff := testtree.Equal(fx.trees[id], testtree.ReadTar(t, &buf)); diff != "" {
			t.Fatalf("%s: snapshot %s: %s", step, id.Short(), diff)
		}
	}
}

func shorts(ids []cas.ID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id.Short())
	}
	return out
}

// TestRepairThenSnapshotsHealInEveryOrder destroys chosen objects (a
// small file's chunk and the block it shares, a chunk two files share, a
// whole pack, the trees of the older snapshot, the newest snapshot's root
// tree with the backups of its records, the newest snapshot's whole
// pack), repairs with the database kept or lost, then takes snapshots of
// the intact tree in each order a host takes them: a snapshot of a change
// first; a no-change snapshot first (as a plain snapshot, and as a hook's
// start of a turn), then one of a change. The scans trust the stat cache,
// as they do for files that have been settled for a while. After every
// step, no snapshot taken since the repair is damaged, the older ones are
// whole again unless they need an object lost for good, and every whole
// snapshot exports what it was taken of.
func TestRepairThenSnapshotsHealInEveryOrder(t *testing.T) {
	defer scan.SetClock(func() time.Time { return time.Now().Add(time.Hour) })()
	targets := []struct {
		name   string
		damage func(t *testing.T, fx *healFixture)
	}{
		{"small chunk", func(t *testing.T, fx *healFixture) { fx.damage(t, fx.chunkOf(t, fx.newest, "src/x.go")) }},
		{"shared chunk", func(t *testing.T, fx *healFixture) { fx.damage(t, fx.chunkOf(t, fx.newest, "lib/dup.txt")) }},
		{"pack of a large chunk", func(t *testing.T, fx *healFixture) {
			file, _ := fx.where(t, fx.chunkOf(t, fx.newest, "big.bin"))
			must(t, os.Remove(file))
		}},
		{"older trees", func(t *testing.T, fx *healFixture) { fx.damage(t, fx.treeOf(t, fx.newest, "src")) }},
		{"newest root tree", func(t *testing.T, fx *healFixture) { fx.damage(t, fx.treeOf(t, fx.newest, "")) }},
		{"pack of the newest root tree", func(t *testing.T, fx *healFixture) {
			file, _ := fx.where(t, fx.treeOf(t, fx.newest, ""))
			must(t, os.Remove(file))
		}},
	}
	change := func(t *testing.T, fx *healFixture) SnapshotOptions {
		testtree.Write(t, fx.dir, testtree.Tree{"src/w.go": {Data: "package w\n"}})
		return SnapshotOptions{}
	}
	same := func(*testing.T, *healFixture) SnapshotOptions { return SnapshotOptions{} }
	turn := func(*testing.T, *healFixture) SnapshotOptions { return SnapshotOptions{Session: "s", Turn: "t2"} }
	type step struct {
		name string
		opts func(*testing.T, *healFixture) SnapshotOptions
	}
	orders := [][]step{
		{{"a change", change}},
		{{"no change", same}, {"a change", change}},
		{{"no change in a turn", turn}, {"a change", change}},
	}
	for _, target := range targets {
		for _, dbLost := range []bool{false, true} {
			for _, order := range orders {
				name := fmt.Sprintf("%s/database lost %v/%s first", target.name, dbLost, order[0].name)
				t.Run(name, func(t *testing.T) {
					fx := newHealFixture(t)
					before := fx.indexed(t)
					target.damage(t, fx)
					if dbLost {
						must(t, os.Remove(filepath.Join(fx.s.Location(), "casckpt.db")))
					}
					if _, err := fx.s.Repair(context.Background()); err != nil {
						t.Fatal(err)
					}
					after := fx.indexed(t)
					lost := map[cas.ID]bool{}
					for id := range maps.Keys(before) {
						lost[id] = !after[id]
					}
					if !slices.Contains(slices.Collect(maps.Values(lost)), true) {
						t.Fatal("the damage lost nothing")
					}
					if !dbLost && !slices.Equal(fx.listed(t), []cas.ID{fx.newest, fx.first}) {
						t.Fatalf("repair of an intact database kept %v", shorts(fx.listed(t)))
					}
					fx.check(t, "after the repair", lost, nil)
					var since []cas.ID
					for _, st := range order {
						r := fx.take(t, st.opts(t, fx))
						since = append(since, r.ID)
						fx.check(t, "after "+st.name, lost, since)
					}
				})
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
