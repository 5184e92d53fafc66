package index

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestPolicyRecords: a policy reads back as it was stored, a project
// without one reads as the default, the later of two policies wins
// (ApplyPolicy), DeleteProject deletes it, and a record of another
// version or a foreign lifecycle is refused as corrupt.
func TestPolicyRecords(t *testing.T) {
	db := Open(filepath.Join(t.TempDir(), "db"), Options{})
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := Policy{Workdir: "/w", Lifecycle: "completed", LifecycleSince: at, Test: true, RetentionDays: 3, Keep: 10, NoCleanup: true, Set: at}
	err := db.Update(func(tx *Tx) error {
		if got, err := tx.Policy("/w"); err != nil || got != (Policy{Workdir: "/w"}) {
			t.Fatalf("no record: %+v %v", got, err)
		}
		if err := tx.PutProject(Project{Workdir: "/w", Created: at, LastTouch: at}); err != nil {
			return err
		}
		if err := tx.PutPolicy(p); err != nil {
			return err
		}
		older := Policy{Workdir: "/w", Lifecycle: "running", Set: at.Add(-time.Hour)}
		if err := tx.ApplyPolicy(older); err != nil {
			return err
		}
		if got, err := tx.Policy("/w"); err != nil || !bytes.Equal(EncodePolicy(got), EncodePolicy(p)) {
			t.Fatalf("after an older policy applied: %+v %v, want %+v", got, err, p)
		}
		later := Policy{Workdir: "/w", Lifecycle: "failed", Set: at.Add(time.Hour)}
		if err := tx.ApplyPolicy(later); err != nil {
			return err
		}
		if got, err := tx.Policies(); err != nil || len(got) != 1 || !got["/w"].Set.Equal(later.Set) || got["/w"].Lifecycle != "failed" {
			t.Fatalf("after a later policy applied: %+v %v", got, err)
		}
		if err := tx.DeleteProject("/w"); err != nil {
			return err
		}
		got, err := tx.Policies()
		if err != nil || len(got) != 0 {
			t.Fatalf("DeleteProject left %+v %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := DecodePolicy(EncodePolicy(p)); err != nil || !got.Set.Equal(p.Set) || got.Lifecycle != p.Lifecycle || got.Keep != 10 || !got.NoCleanup || !got.Test || got.RetentionDays != 3 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	bad := EncodePolicy(Policy{Workdir: "/w", Lifecycle: "paused"})
	if _, err := DecodePolicy(bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a foreign lifecycle: %v", err)
	}
	newer := EncodePolicy(p)
	newer[0] = policyVersion + 1
	if _, err := DecodePolicy(newer); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("another version: %v", err)
	}
}
