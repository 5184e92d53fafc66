package remote

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestPackListRoundTrip(t *testing.T) {
	names := [][16]byte{{1, 2, 3}, {0xff}}
	b := EncodePackList(names)
	got, err := DecodePackList(b)
	if err != nil || !slices.Equal(got, names) {
		t.Fatalf("got %v, %v; want %v", got, err, names)
	}
	if got, err := DecodePackList(EncodePackList(nil)); err != nil || len(got) != 0 {
		t.Fatalf("empty list: %v, %v", got, err)
	}
	bad := bytes.Clone(b)
	bad[10] ^= 1
	if _, err := DecodePackList(bad); !errors.Is(err, ErrBadPackList) {
		t.Fatalf("flipped byte: %v", err)
	}
}

func TestGCKey(t *testing.T) {
	k := GCKey(PendingDir, time.Unix(5, 0))
	if !IsGCKey(PendingDir, k) || IsGCKey(DeletedDir, k) || IsGCKey(PendingDir, PendingDir+"x-y") {
		t.Fatalf("key %q misread", k)
	}
}

func TestHorizonKey(t *testing.T) {
	for _, g := range []uint64{0, 1, 12345, 1<<64 - 1} {
		if got, ok := ParseHorizon(HorizonKey(g)); !ok || got != g {
			t.Fatalf("generation %d read back as %d, %v", g, got, ok)
		}
	}
	if HorizonKey(9) >= HorizonKey(10) {
		t.Fatal("horizon keys do not sort by generation")
	}
	for _, bad := range []string{HorizonDir + "12", HorizonDir + "0000000000000000000x", DeletedDir + "00000000000000000001", HorizonDir + "99999999999999999999"} {
		if _, ok := ParseHorizon(bad); ok {
			t.Fatalf("%q read as a horizon key", bad)
		}
	}
}

func FuzzDecodePackList(f *testing.F) {
	f.Add(EncodePackList([][16]byte{{1}, {2}}))
	f.Add([]byte(packListMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, err := DecodePackList(b)
		if err != nil {
			return
		}
		if again := EncodePackList(names); !bytes.Equal(again, b) {
			t.Fatalf("decoded %d names from bytes that do not re-encode the same", len(names))
		}
	})
}
