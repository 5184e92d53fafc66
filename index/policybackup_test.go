package index

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestPolicyBackupRoundTrip(t *testing.T) {
	p := Policy{Workdir: "/home/u/p", Lifecycle: "completed", LifecycleSince: time.Unix(5, 6), Test: true,
		RetentionDays: 3, Keep: 4, NoCleanup: true, Set: time.Unix(7, 8)}
	got, err := DecodePolicyBackup(EncodePolicyBackup(p))
	if err != nil || !got.LifecycleSince.Equal(p.LifecycleSince) || !got.Set.Equal(p.Set) {
		t.Fatalf("got %+v, %v", got, err)
	}
	got.LifecycleSince, got.Set, p.LifecycleSince, p.Set = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("got %+v, want %+v", got, p)
	}
	// Neither a record backup nor a turn backup reads as a policy backup,
	// nor a policy backup as either.
	if _, err := DecodePolicyBackup(EncodePolicy(p)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a policy record read as a policy backup: %v", err)
	}
	if _, _, err := DecodeBackup(EncodePolicyBackup(p)); err == nil {
		t.Fatal("a policy backup read as a record backup")
	}
	if _, err := DecodeTurnBackup(EncodePolicyBackup(p)); err == nil {
		t.Fatal("a policy backup read as a turn backup")
	}
	if _, err := DecodePolicyBackup(EncodePolicyBackup(Policy{Workdir: "rel/p"})); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a relative workdir was accepted: %v", err)
	}
}

func FuzzDecodePolicyBackup(f *testing.F) {
	f.Add(EncodePolicyBackup(Policy{Workdir: "/p", Lifecycle: "running", LifecycleSince: time.Unix(1, 2), Set: time.Unix(3, 4)}))
	f.Add(EncodePolicyBackup(Policy{Workdir: "/p", Lifecycle: "completed", Test: true, RetentionDays: 7, Keep: 2, NoCleanup: true}))
	f.Add([]byte{policyBackupVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := DecodePolicyBackup(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		again, err := DecodePolicyBackup(EncodePolicyBackup(p))
		if err != nil || !bytes.Equal(EncodePolicyBackup(again), EncodePolicyBackup(p)) {
			t.Fatalf("policy backup does not round-trip: %+v, %v", again, err)
		}
	})
}
