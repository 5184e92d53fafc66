package index

import (
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// TestAddedRoundTrip: what a snapshot added survives its record and its
// backup, with or without labels; records without it keep their older
// versions byte for byte; a sized record without added bytes is refused
// (one encoding per record).
func TestAddedRoundTrip(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	base := Snapshot{ID: cas.ID{1}, Project: "/p", Seq: 4, Root: cas.ID{2}, Time: now, Stats: Stats{Files: 2, Bytes: 30}}
	cases := map[string]Snapshot{}
	cases["plain"] = base
	sized := base
	sized.Added = Added{Bytes: 1234, Raw: 5678}
	cases["sized"] = sized
	both := sized
	both.Session, both.Turn = "s1", "t1"
	cases["sized and labelled"] = both
	for name, s := range cases {
		rec, err := decodeSnapshot(s.Project, s.Seq, encodeSnapshot(s))
		if err != nil || rec.Added != s.Added || rec.Session != s.Session || rec.Turn != s.Turn || rec.Stats != s.Stats {
			t.Errorf("%s: record %+v, %v", name, rec, err)
		}
		back, _, err := DecodeBackup(EncodeBackup(s, "o"))
		if err != nil || back.Added != s.Added || back.Session != s.Session || back.Turn != s.Turn {
			t.Errorf("%s: backup %+v, %v", name, back, err)
		}
	}
	if b := encodeSnapshot(base); b[0] != recordVersion {
		t.Fatal("a record without added bytes changed format")
	}
	if b := EncodeBackup(base, ""); b[0] != recordVersion {
		t.Fatal("a backup without added bytes changed format")
	}
	// A labelled record turned version 3 with added bytes 0 and raw 0.
	bad := encodeSnapshot(Snapshot{ID: cas.ID{1}, Root: cas.ID{2}, Time: now, Session: "s"})
	bad[0] = sizedVersion
	bad = append(bad, 0, 0)
	if _, err := decodeSnapshot("/p", 1, bad); err == nil {
		t.Fatal("a sized record with no added bytes was read")
	}
}
