package index

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
)

func TestRecordsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := OpenWrite(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 123)
	err = db.Update(func(tx *bolt.Tx) error {
		if err := PutProject(tx, Project{Workdir: "/p", Created: now, LastTouch: now}); err != nil {
			return err
		}
		for i := range 3 {
			root := cas.Sum(cas.KindTree, []byte{byte(i)})
			s := Snapshot{ID: NewSnapshotID("/p", root, now, "r"), Project: "/p", Root: root, Time: now, Reason: "r\n\"x\"", Stats: Stats{Files: 2, Bytes: 9}}
			if i == 1 {
				s.RecordID = cas.ID{9}
			}
			if err := AddSnapshot(tx, &s); err != nil {
				return err
			}
		}
		return UpdateStatCache(tx, "/p", map[string]DirCache{"": {Tree: cas.ID{7}, Names: 99, Stamps: []uint64{42, 0}, Subtrees: []cas.ID{{8}}}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = OpenRead(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		snaps, err := Snapshots(tx, "/p")
		if err != nil || len(snaps) != 3 || snaps[0].Seq != 3 || snaps[2].Seq != 1 {
			t.Fatalf("snapshots newest first: %+v %v", snaps, err)
		}
		if snaps[0].ID == snaps[1].ID || snaps[0].Reason != "r\n\"x\"" || !snaps[0].Time.Equal(now) ||
			snaps[1].RecordID != (cas.ID{9}) || !snaps[0].RecordID.IsZero() {
			t.Fatalf("record: %+v", snaps[0])
		}
		p, ok, err := GetProject(tx, "/p")
		if !ok || err != nil || !p.Created.Equal(now) {
			t.Fatalf("project: %+v %v %v", p, ok, err)
		}
		c := LoadStatCache(tx, "/p")
		if c[""].Tree != (cas.ID{7}) || c[""].Names != 99 || len(c[""].Stamps) != 2 || c[""].Stamps[0] != 42 || c[""].Subtrees[0] != (cas.ID{8}) {
			t.Fatalf("stat cache: %+v", c)
		}
		return nil
	})
}

func TestOpenReadMissingCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db, err := OpenRead(path, time.Second)
	if db != nil || err != nil {
		t.Fatalf("OpenRead of a missing db: %v %v", db, err)
	}
	if _, err := filepath.Glob(path + "*"); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 0 {
		t.Fatalf("OpenRead created %v", m)
	}
}

func TestRacilyCleanStampsNeverMatch(t *testing.T) {
	scan := time.Now().UnixNano()
	hour := int64(time.Hour)
	old := FileStamp(10, scan-hour, scan-hour, 5, 0o100644, scan)
	if old != CurrentStamp(10, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a file modified an hour before its scan is not trusted")
	}
	racy := FileStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644, scan)
	if racy == CurrentStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644) {
		t.Fatal("a file modified just before its scan is trusted")
	}
	if old == CurrentStamp(11, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a size change keeps the stamp")
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	f.Add(EncodeSnapshot(Snapshot{Reason: "x", Pinned: true, Stats: Stats{Files: 1}}))
	f.Add(EncodeSnapshot(Snapshot{Reason: "y", RecordID: cas.ID{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSnapshot("/p", 1, b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(EncodeSnapshot(s), b) {
			t.Fatal("snapshot record does not re-encode to its input")
		}
	})
}

func TestRecordCopiesAndInsert(t *testing.T) {
	s := Snapshot{ID: cas.ID{1}, Project: "/home/u/p", Seq: 7, Root: cas.ID{2}, Time: time.Unix(5, 6), Reason: "before patch",
		Stats: Stats{Files: 3, Bytes: 4}, MaxFileSize: 10 << 20}
	got, origin, err := DecodeCopy(EncodeCopy(s, "git:abc:/home/u/p"))
	if err != nil || origin != "git:abc:/home/u/p" || got.ID != s.ID || got.Seq != 7 || got.Project != s.Project ||
		got.Root != s.Root || !got.Time.Equal(s.Time) || got.Reason != s.Reason || got.Stats != s.Stats || got.MaxFileSize != s.MaxFileSize {
		t.Fatalf("copy round trip: %+v %q %v", got, origin, err)
	}
	for _, bad := range []Snapshot{{ID: cas.ID{1}, Project: "relative", Seq: 1, Root: cas.ID{2}}, {ID: cas.ID{1}, Project: "/p/../q", Seq: 1, Root: cas.ID{2}}, {Project: "/p", Seq: 1, Root: cas.ID{2}}} {
		if _, _, err := DecodeCopy(EncodeCopy(bad, "")); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("copy of %+v decoded: %v", bad, err)
		}
	}

	db, err := OpenWrite(filepath.Join(t.TempDir(), "db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		if err := InsertSnapshot(tx, s); err != nil {
			return err
		}
		next := Snapshot{ID: cas.ID{3}, Project: s.Project, Root: cas.ID{4}, Time: s.Time.Add(time.Second)}
		if err := AddSnapshot(tx, &next); err != nil || next.Seq != 8 {
			t.Fatalf("the next snapshot after an inserted 7 got %d, %v", next.Seq, err)
		}
		snaps, err := Snapshots(tx, s.Project)
		if err != nil || len(snaps) != 2 || snaps[1].ID != s.ID || snaps[1].Seq != 7 {
			t.Fatalf("after insert: %+v %v", snaps, err)
		}
		if err := AddSnapshot(tx, &Snapshot{Project: "/p"}); err == nil {
			t.Fatal("a record without an ID was added")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeCopy(f *testing.F) {
	f.Add(EncodeCopy(Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 1, Root: cas.ID{2}, Reason: "x", Stats: Stats{Files: 1}}, "git:1:/p"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, origin, err := DecodeCopy(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		if !bytes.Equal(EncodeCopy(s, origin), b) {
			t.Fatal("record copy does not re-encode to its input")
		}
	})
}

func FuzzDecodeDirCache(f *testing.F) {
	f.Add(EncodeDirCache(DirCache{Tree: cas.ID{1}, Names: 5, Stamps: []uint64{9, 0}, Subtrees: []cas.ID{{2}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDirCache(b)
		if err == nil && !bytes.Equal(EncodeDirCache(d), b) {
			t.Fatal("stat cache record does not re-encode to its input")
		}
	})
}

func FuzzDecodeProject(f *testing.F) {
	f.Add(EncodeProject(Project{Created: time.Unix(5, 0), LastTouch: time.Unix(6, 0)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodeProject("/p", b)
		if err == nil && !bytes.Equal(EncodeProject(p), b) {
			t.Fatal("project record does not re-encode to its input")
		}
	})
}
