package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/statcache"
)

func TestRecordsRoundTrip(t *testing.T) {
	db := testDB(t)
	now := time.Unix(1_700_000_000, 123)
	err := db.Update(func(tx *Tx) error {
		if err := tx.PutProject(Project{Workdir: "/p", Created: now, LastTouch: now}); err != nil {
			return err
		}
		for i := range 3 {
			root := cas.Sum(cas.KindTree, []byte{byte(i)})
			s := Snapshot{ID: NewSnapshotID("/p", root, now, "r"), Project: "/p", Root: root, Time: now, Reason: "r\n\"x\"", Stats: Stats{Files: 2, Bytes: 9}}
			if i == 1 {
				s.BackupID = cas.ID{9}
			}
			if err := tx.AddSnapshot(&s); err != nil {
				return err
			}
		}
		return tx.UpdateStatCache("/p", map[string]statcache.Dir{"": {Tree: cas.ID{7}, Names: 99, Stamps: []uint64{42, 0}, Subtrees: []cas.ID{{8}}}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		snaps, err := tx.Snapshots("/p")
		if err != nil || len(snaps) != 3 || snaps[0].Seq != 3 || snaps[2].Seq != 1 {
			t.Fatalf("snapshots newest first: %+v %v", snaps, err)
		}
		if snaps[0].ID == snaps[1].ID || snaps[0].Reason != "r\n\"x\"" || !snaps[0].Time.Equal(now) ||
			snaps[1].BackupID != (cas.ID{9}) || !snaps[0].BackupID.IsZero() {
			t.Fatalf("record: %+v", snaps[0])
		}
		p, ok, err := tx.Project("/p")
		if !ok || err != nil || !p.Created.Equal(now) {
			t.Fatalf("project: %+v %v %v", p, ok, err)
		}
		c := tx.StatCache("/p")
		if c[""].Tree != (cas.ID{7}) || c[""].Names != 99 || len(c[""].Stamps) != 2 || c[""].Stamps[0] != 42 || c[""].Subtrees[0] != (cas.ID{8}) {
			t.Fatalf("stat cache: %+v", c)
		}
		return nil
	})
}

func TestViewOfAMissingDatabaseCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := Open(path, Options{Timeout: time.Second, Chunker: "c"})
	err := db.View(func(tx *Tx) error {
		snaps, err := tx.Snapshots("/p")
		if err != nil || len(snaps) != 0 || tx.PendingDrops() != 0 || !tx.LastPrune().IsZero() {
			t.Fatalf("a missing database does not read as empty: %v %v", snaps, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 0 {
		t.Fatalf("View created %v", m)
	}
}

func TestDryRunKeepsNothing(t *testing.T) {
	db := testDB(t)
	err := db.DryRun(func(tx *Tx) error {
		if err := tx.PutProject(Project{Workdir: "/p"}); err != nil {
			return err
		}
		if _, ok, _ := tx.Project("/p"); !ok {
			t.Fatal("a dry run does not see its own change")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		if _, ok, _ := tx.Project("/p"); ok {
			t.Fatal("a dry run's change was kept")
		}
		return nil
	})
}

func TestAFailedUpdateKeepsNothingAndSaysWhy(t *testing.T) {
	db := testDB(t)
	boom := errors.New("boom")
	err := db.Update(func(tx *Tx) error {
		if err := tx.PutProject(Project{Workdir: "/p"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update: %v, want fn's error", err)
	}
	db.View(func(tx *Tx) error {
		if _, ok, _ := tx.Project("/p"); ok {
			t.Fatal("a failed update's change was kept")
		}
		return nil
	})
}

func TestAPanicIsADamagedDatabase(t *testing.T) {
	db := testDB(t)
	err := db.View(func(tx *Tx) error { panic("page 7: unreachable") })
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "repair") {
		t.Fatalf("panic in a view: %v, want ErrDamaged naming repair", err)
	}
}

// TestADatabaseCutShortIsDamaged: a database file cut below the pages its
// meta page names (a copy cut short, a disk that lost its tail) is
// reported damaged, naming repair, when it is opened, not by a crash at
// some later read.
func TestADatabaseCutShortIsDamaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	var reach int64 // where the pages end: the file is longer, by the step it grows by
	err := Open(path, Options{Timeout: time.Second, Chunker: "c"}).Update(func(tx *Tx) error {
		for i := range 500 {
			if err := tx.PutProject(Project{Workdir: fmt.Sprintf("/projects/%04d", i)}); err != nil {
				return err
			}
		}
		reach = tx.tx.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, reach/3); err != nil {
		t.Fatal(err)
	}
	err = Open(path, Options{Timeout: time.Second, Chunker: "c"}).View(func(*Tx) error { return nil })
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), "repair") {
		t.Fatalf("a database cut to a third: %v, want ErrDamaged, cut short, naming repair", err)
	}
}

func TestAnotherChunkerIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	if err := Open(path, Options{Timeout: time.Second, Chunker: "a"}).Update(func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	err := Open(path, Options{Timeout: time.Second, Chunker: "b"}).View(func(*Tx) error { return nil })
	if !errors.Is(err, ErrSchema) {
		t.Fatalf("a database of another chunker: %v, want ErrSchema", err)
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(encodeSnapshot(Snapshot{Reason: "x", Pinned: true, Stats: Stats{Files: 1}}))
	f.Add(encodeSnapshot(Snapshot{Reason: "y", BackupID: cas.ID{1}}))
	f.Add(encodeSnapshot(Snapshot{Reason: "z", Session: "s", Turn: "t", BackupID: cas.ID{1}}))
	f.Add(encodeSnapshot(Snapshot{Reason: "e", Exclude: []string{".tox/"}, MaxDirFiles: 200, BackupID: cas.ID{1}}))
	f.Add(encodeSnapshot(Snapshot{Reason: "e", Turn: "t", MaxDirFiles: 200}))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot("/p", 1, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(encodeSnapshot(s), b) {
			t.Fatal("snapshot record does not re-encode to its input")
		}
	})
}

func TestRecordBackupsAndInsert(t *testing.T) {
	s := Snapshot{ID: cas.ID{1}, Project: "/home/u/p", Seq: 7, Root: cas.ID{2}, Time: time.Unix(5, 6), Reason: "before patch",
		Stats: Stats{Files: 3, Bytes: 4}, MaxFileSize: 10 << 20}
	got, origin, err := DecodeBackup(EncodeBackup(s, "git:abc:/home/u/p"))
	if err != nil || origin != "git:abc:/home/u/p" || got.ID != s.ID || got.Seq != 7 || got.Project != s.Project ||
		got.Root != s.Root || !got.Time.Equal(s.Time) || got.Reason != s.Reason || got.Stats != s.Stats || got.MaxFileSize != s.MaxFileSize {
		t.Fatalf("backup round trip: %+v %q %v", got, origin, err)
	}
	for _, bad := range []Snapshot{{ID: cas.ID{1}, Project: "relative", Seq: 1, Root: cas.ID{2}}, {ID: cas.ID{1}, Project: "/p/../q", Seq: 1, Root: cas.ID{2}}, {Project: "/p", Seq: 1, Root: cas.ID{2}}} {
		if _, _, err := DecodeBackup(EncodeBackup(bad, "")); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("backup of %+v decoded: %v", bad, err)
		}
	}

	db := testDB(t)
	err = db.Update(func(tx *Tx) error {
		if err := tx.InsertSnapshot(s); err != nil {
			return err
		}
		next := Snapshot{ID: cas.ID{3}, Project: s.Project, Root: cas.ID{4}, Time: s.Time.Add(time.Second)}
		if err := tx.AddSnapshot(&next); err != nil || next.Seq != 8 {
			t.Fatalf("the next snapshot after an inserted 7 got %d, %v", next.Seq, err)
		}
		snaps, err := tx.Snapshots(s.Project)
		if err != nil || len(snaps) != 2 || snaps[1].ID != s.ID || snaps[1].Seq != 7 {
			t.Fatalf("after insert: %+v %v", snaps, err)
		}
		if err := tx.AddSnapshot(&Snapshot{Project: "/p"}); err == nil {
			t.Fatal("a record without an ID was added")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeBackup(f *testing.F) {
	f.Add(EncodeBackup(Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 1, Root: cas.ID{2}, Reason: "x", Stats: Stats{Files: 1}}, "git:1:/p"))
	f.Add(EncodeBackup(Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 1, Root: cas.ID{2}, Session: "s", Turn: "t"}, ""))
	f.Add(EncodeBackup(Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 1, Root: cas.ID{2}, Exclude: []string{".tox/", "a"}}, ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, origin, err := DecodeBackup(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(EncodeBackup(s, origin), b) {
			t.Fatal("record backup does not re-encode to its input")
		}
	})
}

func FuzzDecodeDir(f *testing.F) {
	f.Add(encodeDir(statcache.Dir{Tree: cas.ID{1}, Names: 5, Stamps: []uint64{9, 0}, Subtrees: []cas.ID{{2}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDir(b)
		if err == nil && !bytes.Equal(encodeDir(d), b) {
			t.Fatal("stat cache record does not re-encode to its input")
		}
	})
}

func FuzzDecodeProject(f *testing.F) {
	f.Add(encodeProject(Project{Created: time.Unix(5, 0), LastTouch: time.Unix(6, 0)}))
	f.Add(encodeProject(Project{Created: time.Unix(5, 0), LastTouch: time.Unix(6, 0), Parent: DirID{Dev: 2049, Ino: 1 << 40}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProject("/p", b)
		if err == nil && !bytes.Equal(encodeProject(p), b) {
			t.Fatal("project record does not re-encode to its input")
		}
	})
}

// TestLocationsOfBothLayouts: an object stored alone keeps the v1 layout
// (what indexes written before blocks hold), a member of a block the v2
// one, and both come back as they went in.
func TestLocationsOfBothLayouts(t *testing.T) {
	db := testDB(t)
	alone := cas.Location{Pack: 1, PackEntry: cas.PackEntry{ID: cas.ID{1}, Kind: cas.KindChunk, Codec: cas.CodecZstd, Offset: 8, RawLen: 300_000, StoredLen: 1000}}
	member := cas.Location{Pack: 1, PackEntry: cas.PackEntry{ID: cas.ID{2}, Kind: cas.KindTree, Codec: cas.CodecZstd, Offset: 1052, RawLen: 10, StoredLen: 50, BlockLen: 200, Member: 76}}
	if len(encodeLocation(alone)) != locationSize || len(encodeLocation(member)) != locationSizeV2 {
		t.Fatal("a location is not encoded in the layout of its kind")
	}
	err := db.Update(func(tx *Tx) error {
		for _, l := range []cas.Location{alone, member} {
			if err := tx.Objects().PutObject(l, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		for _, want := range []cas.Location{alone, member} {
			if got, err := tx.Objects().Locate(want.ID); err != nil || got != want {
				t.Fatalf("located %+v, %v; want %+v", got, err, want)
			}
		}
		return nil
	})
}

func FuzzDecodeLocation(f *testing.F) {
	f.Add(encodeLocation(cas.Location{Pack: 3, PackEntry: cas.PackEntry{Kind: cas.KindTree, Codec: cas.CodecZstd, Offset: 8, RawLen: 10, StoredLen: 5}}))
	f.Add(encodeLocation(cas.Location{Pack: 4, PackEntry: cas.PackEntry{Kind: cas.KindChunk, Codec: cas.CodecZstd, Offset: 8, RawLen: 10, StoredLen: 50, BlockLen: 200, Member: 76}}))
	f.Add(encodeLocation(cas.Location{Pack: 5, PackEntry: cas.PackEntry{Kind: cas.KindTree, Codec: cas.CodecZstd, Offset: 8, RawLen: 900, StoredLen: 50, BlockLen: 200, Member: 20, DeltaLen: 40, Base: cas.ID{7}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLocation(cas.ID{}, b)
		if err == nil && !bytes.Equal(encodeLocation(l), b) {
			t.Fatal("location does not re-encode to the same bytes")
		}
	})
}

// testDB returns a database in a temporary directory.
func testDB(t *testing.T) *DB {
	return Open(filepath.Join(t.TempDir(), "db"), Options{Timeout: time.Second, Chunker: "test"})
}

func TestLabelsTurnsAndLedger(t *testing.T) {
	db := testDB(t)
	now := time.Unix(1_700_000_000, 0)
	labelled := Snapshot{ID: cas.ID{1}, Project: "/p", Root: cas.ID{2}, Time: now, Session: "s1", Turn: "t1", BackupID: cas.ID{3}}
	plain := Snapshot{ID: cas.ID{4}, Project: "/p", Root: cas.ID{2}, Time: now.Add(time.Second)}
	if b := encodeSnapshot(plain); b[0] != recordVersion {
		t.Fatal("an unlabelled record changed format")
	}
	err := db.Update(func(tx *Tx) error {
		for _, s := range []*Snapshot{&labelled, &plain} {
			if err := tx.AddSnapshot(s); err != nil {
				return err
			}
		}
		if err := tx.PutTurn(Turn{Project: "/p", ID: "t1", Session: "s1", Start: cas.ID{1}, Started: now}); err != nil {
			return err
		}
		if err := tx.PutTurn(Turn{Project: "/p", ID: "t0", Start: cas.ID{1}, Started: now.Add(-time.Hour), End: cas.ID{4}, Ended: now, BackupID: cas.ID{9}}); err != nil {
			return err
		}
		writes := make([]Write, LedgerLimit+5)
		for i := range writes {
			writes[i] = Write{Path: fmt.Sprintf("f%05d", i), State: cas.ID{byte(i%250 + 1)}, Time: now}
		}
		writes[len(writes)-1] = Write{Path: "gone", Time: now}
		return tx.RecordWrites("/p", writes)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		snaps, _ := tx.Snapshots("/p")
		if snaps[1].Session != "s1" || snaps[1].Turn != "t1" || snaps[1].BackupID != (cas.ID{3}) || snaps[0].Turn != "" {
			t.Fatalf("labels: %+v", snaps)
		}
		turns, err := tx.Turns("/p")
		if err != nil || len(turns) != 2 || turns[0].ID != "t1" || !turns[0].Open() || turns[1].Open() || turns[1].End != (cas.ID{4}) {
			t.Fatalf("turns newest first: %+v %v", turns, err)
		}
		if tr, ok, _ := tx.Turn("/p", "t0"); !ok || tr.BackupID != (cas.ID{9}) || !tr.Ended.Equal(now) {
			t.Fatalf("turn t0: %+v", tr)
		}
		ledger, err := tx.Writes("/p")
		if err != nil || len(ledger) != LedgerLimit {
			t.Fatalf("ledger holds %d writes, want the newest %d: %v", len(ledger), LedgerLimit, err)
		}
		if _, ok := ledger["f00000"]; ok {
			t.Fatal("the oldest write outlived the limit")
		}
		if w, ok := ledger["gone"]; !ok || !w.State.IsZero() {
			t.Fatalf("a recorded deletion: %+v", w)
		}
		return nil
	})
	db.Update(func(tx *Tx) error { return tx.DeleteProject("/p") })
	db.View(func(tx *Tx) error {
		turns, _ := tx.Turns("/p")
		ledger, _ := tx.Writes("/p")
		if len(turns) != 0 || len(ledger) != 0 {
			t.Fatalf("a forgotten project kept %d turns and %d writes", len(turns), len(ledger))
		}
		return nil
	})
	tr := Turn{Project: "/p", ID: "t9", Session: "s", Start: cas.ID{1}, Started: now, End: cas.ID{2}, Ended: now}
	if got, err := DecodeTurnBackup(EncodeTurnBackup(tr)); err != nil || got != tr {
		t.Fatalf("turn backup round trip: %+v %v", got, err)
	}
	if _, _, err := DecodeBackup(EncodeTurnBackup(tr)); err == nil {
		t.Fatal("a turn backup decoded as a snapshot backup")
	}
}

// TestTurnRecordNewFields: a turn record's title, interrupted mark and
// undoing snapshot round-trip, in the record and its backup, and a record
// written before they existed still reads as it did.
func TestTurnRecordNewFields(t *testing.T) {
	now := time.Unix(1700000000, 5)
	tr := Turn{Project: "/p", ID: "t", Session: "s", Start: cas.ID{1}, Started: now, End: cas.ID{2}, Ended: now,
		BackupID: cas.ID{3}, Title: "fix the bug", Interrupted: true, UndoneBy: cas.ID{4}}
	if got, err := decodeTurn("/p", "t", encodeTurn(tr)); err != nil || got != tr {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	tr.BackupID = cas.ID{}
	if got, err := DecodeTurnBackup(EncodeTurnBackup(tr)); err != nil || got != tr {
		t.Fatalf("backup round trip: %+v %v", got, err)
	}
	// Version 1 as the first release wrote it: session, start, started,
	// flags (1: ended), end, ended.
	start, end := cas.ID{1}, cas.ID{2}
	old := append([]byte{1, 1, 's'}, start[:]...)
	old = binary.AppendVarint(old, now.UnixNano())
	flagsAt := len(old)
	old = append(append(old, 1), end[:]...)
	old = binary.AppendVarint(old, now.UnixNano())
	want := Turn{Project: "/p", ID: "t", Session: "s", Start: start, Started: now, End: end, Ended: now}
	if got, err := decodeTurn("/p", "t", old); err != nil || got != want || !bytes.Equal(encodeTurn(got), old) {
		t.Fatalf("an old record: %+v %v", got, err)
	}
	old[flagsAt] |= 64
	if _, err := decodeTurn("/p", "t", old); err == nil {
		t.Fatal("an unknown flag was accepted")
	}
}

func FuzzDecodeTurn(f *testing.F) {
	f.Add(encodeTurn(Turn{Session: "s", Start: cas.ID{1}, End: cas.ID{2}, BackupID: cas.ID{3}}))
	f.Add(encodeTurn(Turn{Session: "s", Start: cas.ID{1}, End: cas.ID{2}, Title: "t", Interrupted: true, UndoneBy: cas.ID{4}}))
	f.Add(encodeTurn(Turn{Start: cas.ID{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := decodeTurn("/p", "t", b)
		if err == nil && !bytes.Equal(encodeTurn(tr), b) {
			t.Fatal("turn record does not re-encode to its input")
		}
	})
}

func FuzzDecodeTurnBackup(f *testing.F) {
	f.Add(EncodeTurnBackup(Turn{Project: "/p", ID: "t", Start: cas.ID{1}, End: cas.ID{2}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := DecodeTurnBackup(b)
		if err == nil && !bytes.Equal(EncodeTurnBackup(tr), b) {
			t.Fatal("turn backup does not re-encode to its input")
		}
	})
}

func FuzzDecodeWrite(f *testing.F) {
	f.Add(encodeWrite(Write{Seq: 3, State: cas.ID{1}}))
	f.Add(encodeWrite(Write{Seq: 4}))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeWrite("p", b)
		if err == nil && !bytes.Equal(encodeWrite(w), b) {
			t.Fatal("recorded write does not re-encode to its input")
		}
	})
}

func TestTurnsGoWithTheirSnapshots(t *testing.T) {
	db := testDB(t)
	now := time.Unix(1_700_000_000, 0)
	snaps := make([]Snapshot, 4)
	turns := []Turn{
		{ID: "ended", Start: cas.ID{1}, End: cas.ID{2}, BackupID: cas.ID{11}},
		{ID: "open", Start: cas.ID{3}, BackupID: cas.ID{12}},
		{ID: "same", Start: cas.ID{4}, End: cas.ID{4}, BackupID: cas.ID{13}},
	}
	err := db.Update(func(tx *Tx) error {
		if err := tx.PutProject(Project{Workdir: "/p", Created: now}); err != nil {
			return err
		}
		for i := range snaps {
			snaps[i] = Snapshot{ID: cas.ID{byte(i + 1)}, Project: "/p", Root: cas.ID{9}, Time: now.Add(time.Duration(i) * time.Second)}
			if err := tx.AddSnapshot(&snaps[i]); err != nil {
				return err
			}
		}
		for _, tr := range turns {
			tr.Project, tr.Started = "/p", now
			if err := tx.PutTurn(tr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	left := func(want ...string) {
		t.Helper()
		db.View(func(tx *Tx) error {
			list, err := tx.Turns("/p")
			var got []string
			for _, tr := range list {
				got = append(got, tr.ID)
			}
			slices.Sort(got)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("turns left %v (%v), want %v", got, err, want)
			}
			return nil
		})
	}
	drop := func(i int) {
		t.Helper()
		if err := db.Update(func(tx *Tx) error { return tx.DeleteSnapshot(snaps[i]) }); err != nil {
			t.Fatal(err)
		}
	}
	drop(0) // the ended turn's start: it stays, its end remains
	left("ended", "open", "same")
	drop(2) // the open turn's start: nothing of it remains
	left("ended", "same")
	drop(1)
	left("same")
	db.View(func(tx *Tx) error {
		tomb, _ := tx.Tombstones()
		if _, ok := tomb[cas.ID{11}]; !ok {
			t.Fatal("a deleted turn's backup has no tombstone")
		}
		if _, ok := tomb[cas.ID{12}]; !ok {
			t.Fatal("a deleted open turn's backup has no tombstone")
		}
		return nil
	})
	rem, err := db.ReadRemains()
	if err != nil || len(rem.Turns["/p"]) != 1 || rem.Turns["/p"][0].ID != "same" {
		t.Fatalf("remains: %+v %v", rem.Turns, err)
	}
	db.Update(func(tx *Tx) error { return tx.DeleteProject("/p") })
	db.View(func(tx *Tx) error {
		if tomb, _ := tx.Tombstones(); len(tomb) != 3 {
			t.Fatalf("a forgotten project's turn backup has no tombstone: %d tombstones", len(tomb))
		}
		return nil
	})
}

// TestReadRemainsSkipsUndecodableProjects: a damaged project record is
// left out of what a repair keeps, and the records after it are not.
func TestReadRemainsSkipsUndecodableProjects(t *testing.T) {
	db := testDB(t)
	err := db.Update(func(tx *Tx) error {
		for _, w := range []string{"/a", "/c"} {
			if err := tx.PutProject(Project{Workdir: w, Created: time.Unix(5, 0)}); err != nil {
				return err
			}
		}
		return tx.tx.Bucket(bucketProjects).Put([]byte("/b"), []byte{0xff, 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	rem, err := db.ReadRemains()
	if err != nil {
		t.Fatal(err)
	}
	if len(rem.Projects) != 2 || rem.Projects["/a"].Workdir != "/a" || rem.Projects["/c"].Workdir != "/c" {
		t.Fatalf("remains of a database with one damaged project record: %v", rem.Projects)
	}
}

// TestWritesShareAndApply: writes encoded for the bucket decode as they
// were (paths, states, deletions, times), and applying them to a ledger
// keeps, per path, the write recorded last.
func TestWritesShareAndApply(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	writes := []Write{
		{Path: "a.txt", State: cas.Sum(cas.KindChunk, []byte("a")), Time: t0.Add(2 * time.Second)},
		{Path: "gone.txt", Time: t0.Add(time.Second)}, // a deletion
	}
	workdir, got, err := DecodeWrites(EncodeWrites("/p", writes))
	if err != nil || workdir != "/p" || len(got) != 2 || got[0].Path != "a.txt" || got[0].State != writes[0].State ||
		!got[0].Time.Equal(writes[0].Time) || got[1].Path != "gone.txt" || !got[1].State.IsZero() {
		t.Fatalf("round trip: %q %+v %v", workdir, got, err)
	}
	db := testDB(t)
	newer := Write{Path: "a.txt", State: cas.Sum(cas.KindChunk, []byte("newer")), Time: t0.Add(time.Hour)}
	err = db.Update(func(tx *Tx) error {
		if err := tx.RecordWrites("/p", []Write{newer}); err != nil {
			return err
		}
		return tx.ApplyWrites("/p", got)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *Tx) error {
		have, err := tx.Writes("/p")
		if err != nil || len(have) != 2 || have["a.txt"].State != newer.State || !have["gone.txt"].State.IsZero() {
			t.Fatalf("ledger after applying older writes: %+v %v; want the newer a.txt kept and gone.txt added", have, err)
		}
		return nil
	})
}

func FuzzDecodeWrites(f *testing.F) {
	f.Add(EncodeWrites("/p", []Write{{Path: "a", State: cas.Sum(cas.KindChunk, []byte("a")), Time: time.Unix(5, 0)}, {Path: "b"}}))
	f.Add([]byte{writesBackupVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		workdir, writes, err := DecodeWrites(b)
		if err != nil {
			return
		}
		w2, writes2, err := DecodeWrites(EncodeWrites(workdir, writes))
		if err != nil || w2 != workdir || len(writes2) != len(writes) {
			t.Fatalf("re-encoding %q %d writes: %q %d, %v", workdir, len(writes), w2, len(writes2), err)
		}
	})
}

// TestExclusionsInRecords: a snapshot record and its backup keep the
// exclusions a snapshot was taken with, in a new version, while records
// without them keep their own (old records decode as no exclusions); a
// record of the new version without exclusions is corrupt.
func TestExclusionsInRecords(t *testing.T) {
	s := Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 3, Root: cas.ID{2}, Time: time.Unix(5, 6), Exclude: []string{".tox/", "gen/"}, MaxDirFiles: 200, BackupID: cas.ID{7}}
	for _, labels := range [][2]string{{"", ""}, {"s", "t"}} {
		s.Session, s.Turn = labels[0], labels[1]
		b := encodeSnapshot(s)
		got, err := decodeSnapshot("/p", 3, b)
		if err != nil || b[0] != excludingVersion || !slices.Equal(got.Exclude, s.Exclude) || got.MaxDirFiles != 200 || got.Session != s.Session || got.Turn != s.Turn || got.BackupID != s.BackupID {
			t.Fatalf("record round trip: %+v %v", got, err)
		}
		back, _, err := DecodeBackup(EncodeBackup(s, ""))
		if err != nil || !slices.Equal(back.Exclude, s.Exclude) || back.MaxDirFiles != 200 || back.Session != s.Session || back.Turn != s.Turn {
			t.Fatalf("backup round trip: %+v %v", back, err)
		}
	}
	for _, old := range []Snapshot{{Reason: "v1"}, {Session: "s"}} {
		b := encodeSnapshot(old)
		got, err := decodeSnapshot("/p", 1, b)
		if err != nil || b[0] == excludingVersion || got.Exclude != nil || got.MaxDirFiles != 0 {
			t.Fatalf("a record without exclusions: version %d, %+v %v", b[0], got, err)
		}
	}
	empty := encodeSnapshot(Snapshot{MaxDirFiles: 1})
	empty[len(empty)-1] = 0 // MaxDirFiles 0, no patterns
	if _, err := decodeSnapshot("/p", 1, empty); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("an exclusions record without exclusions: %v", err)
	}
}
