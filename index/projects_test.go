package index

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
)

func TestProjectRecordVersions(t *testing.T) {
	created, touched := time.Unix(5, 6), time.Unix(7, 8)
	// A version-1 record as the store wrote it before parent identities.
	v1 := binary.AppendVarint(binary.AppendVarint([]byte{1}, created.UnixNano()), touched.UnixNano())
	p, err := decodeProject("/p", v1)
	if err != nil || !p.Created.Equal(created) || !p.LastTouch.Equal(touched) || !p.Parent.IsZero() {
		t.Fatalf("version 1: %+v %v", p, err)
	}
	if got := encodeProject(p); string(got) != string(v1) {
		t.Fatalf("a project without a parent identity is written as version 1: %x", got)
	}
	withParent := Project{Workdir: "/p", Created: created, LastTouch: touched, Parent: DirID{Dev: 0, Ino: 77}}
	b := encodeProject(withParent)
	if b[0] != 2 {
		t.Fatalf("a project with a parent identity is written as version %d", b[0])
	}
	if p, err := decodeProject("/p", b); err != nil || p != withParent {
		t.Fatalf("version 2 round trip: %+v %v", p, err)
	}
	for name, bad := range map[string][]byte{
		"version 2 without identity": append(binary.AppendVarint(binary.AppendVarint([]byte{2}, 1), 2), 0, 0),
		"version 2 truncated":        b[:len(b)-1],
		"unknown version":            append([]byte{3}, v1[1:]...),
		"empty":                      {},
		"trailing bytes":             append(v1, 0),
	} {
		if _, err := decodeProject("/p", bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHasSnapshots(t *testing.T) {
	db := testDB(t)
	err := db.Update(func(tx *Tx) error {
		if tx.HasSnapshots("/p") {
			t.Error("an empty store has snapshots")
		}
		if err := tx.PutProject(Project{Workdir: "/p", Parent: DirID{Dev: 1, Ino: 2}}); err != nil {
			return err
		}
		s := Snapshot{ID: cas.ID{1}, Project: "/p", Root: cas.ID{2}, Time: time.Unix(1, 0)}
		if err := tx.AddSnapshot(&s); err != nil {
			return err
		}
		if !tx.HasSnapshots("/p") || tx.HasSnapshots("/p/sub") || tx.HasSnapshots("/") {
			t.Error("HasSnapshots names the wrong projects")
		}
		if p, ok, err := tx.Project("/p"); err != nil || !ok || p.Parent != (DirID{Dev: 1, Ino: 2}) {
			t.Errorf("stored project: %+v %v %v", p, ok, err)
		}
		if err := tx.DeleteSnapshot(s); err != nil {
			return err
		}
		if tx.HasSnapshots("/p") {
			t.Error("a project whose snapshots are all dropped still has snapshots")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
