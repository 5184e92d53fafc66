package remote

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
)

func sample() Commit {
	return Commit{
		Records: []Record{
			{Kind: RecordSnapshot, BackupID: cas.Sum(cas.KindRecord, []byte("s")), Data: []byte("snapshot record")},
			{Kind: RecordTurn, BackupID: cas.Sum(cas.KindRecord, []byte("t")), Data: []byte("turn record")},
			{Kind: RecordWrites, BackupID: cas.ID{7}, Data: []byte("recorded writes")},
			{Kind: RecordPolicy, BackupID: cas.ID{8}, Data: []byte("a policy")},
		},
		Packs: []Pack{{Name: [16]byte{1, 2, 3}, Size: 4096}, {Name: [16]byte{9}, Size: 1}},
	}
}

func TestCommitRoundTrip(t *testing.T) {
	withMachine := sample()
	withMachine.Machine = "sandbox-7.a_b"
	for _, c := range []Commit{sample(), {Records: sample().Records[1:]}, withMachine} {
		got, err := DecodeCommit(EncodeCommit(c))
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("round trip: %+v %v, want %+v", got, err, c)
		}
	}
}

// TestCommitVersions: a commit without a machine is written as version 1,
// as casckpt wrote every commit before machines, and one with a machine
// as version 2; a machine that names none is refused.
func TestCommitVersions(t *testing.T) {
	if b := EncodeCommit(sample()); b[len(commitMagic)] != 1 {
		t.Fatalf("a commit without a machine is version %d", b[len(commitMagic)])
	}
	c := sample()
	c.Machine = "a/b"
	if _, err := DecodeCommit(EncodeCommit(c)); !errors.Is(err, ErrBadCommit) {
		t.Fatalf("a machine with a slash: %v", err)
	}
}

func TestCommitRefusesDamage(t *testing.T) {
	c := sample()
	c.Machine = "m1"
	b := EncodeCommit(c)
	for i := range b {
		d := bytes.Clone(b)
		d[i] ^= 0x40
		if _, err := DecodeCommit(d); !errors.Is(err, ErrBadCommit) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for n := range len(b) {
		if _, err := DecodeCommit(b[:n]); !errors.Is(err, ErrBadCommit) {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
}

func TestKeysSortByTimeAndParse(t *testing.T) {
	id := cas.Sum(cas.KindRecord, []byte("x"))
	at := time.Unix(1_800_000_000, 123)
	k := CommitKey(at, id)
	if got, gotID, ok := ParseTimed(CommitsDir, k); !ok || !got.Equal(at) || gotID != id {
		t.Fatalf("parse %q: %v %v %v", k, got, gotID, ok)
	}
	if !(StartAfter(CommitsDir, at) < k && k < StartAfter(CommitsDir, at.Add(time.Nanosecond))) {
		t.Fatalf("StartAfter does not bracket %q", k)
	}
	if CommitKey(at, id) >= CommitKey(at.Add(time.Second), cas.ID{}) {
		t.Fatal("keys do not sort by time")
	}
	if got, ok := ParsePin(PinKey(id)); !ok || got != id {
		t.Fatalf("pin key: %v %v", got, ok)
	}
	for _, bad := range []string{"commits/1-" + id.String(), "dropped/" + k[len(CommitsDir):], "commits/00000000000000000001-zz"} {
		if _, _, ok := ParseTimed(CommitsDir, bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func FuzzDecodeCommit(f *testing.F) {
	f.Add(EncodeCommit(sample()))
	f.Add(EncodeCommit(Commit{}))
	f.Add(EncodeCommit(Commit{Machine: "m", Records: sample().Records[:1]}))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommit(b)
		if err != nil {
			return
		}
		if again := EncodeCommit(c); !bytes.Equal(again, b) {
			t.Fatalf("decoded commit encodes differently")
		}
	})
}

func FuzzParseKeys(f *testing.F) {
	id := cas.Sum(cas.KindRecord, []byte("x"))
	f.Add(CommitKey(time.Unix(1_800_000_000, 5), id))
	f.Add(DroppedKey(time.Unix(0, 0), id))
	f.Add(PinKey(id))
	f.Fuzz(func(t *testing.T, key string) {
		for _, dir := range []string{CommitsDir, DroppedDir} {
			if at, got, ok := ParseTimed(dir, key); ok {
				again := CommitKey(at, got)
				if dir == DroppedDir {
					again = DroppedKey(at, got)
				}
				if again != key {
					t.Fatalf("%q parses to a key written %q", key, again)
				}
			}
		}
		if got, ok := ParsePin(key); ok && PinKey(got) != key {
			t.Fatalf("%q parses to a pin written %q", key, PinKey(got))
		}
	})
}
