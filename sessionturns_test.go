package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// TestSessionTurns: a session's turns in every project, newest first, with
// whether each is still open there; another session's are left out.
func TestSessionTurns(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := openStoreWith(t, casckpt.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	if got, err := s.SessionTurns(ctx, "s1"); err != nil || len(got) != 0 || got == nil {
		t.Fatalf("no store: %v, %v", got, err)
	}
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(b, "b.txt"), []byte("b\n"), 0o644)
	step := func(dir, session, turn string, end bool) {
		now = now.Add(time.Second)
		mustSnapshot(t, s, dir, casckpt.SnapshotOptions{Session: session, Turn: turn, EndTurn: end})
	}
	step(a, "s1", "t1", false)
	step(a, "s1", "t1", true)
	step(a, "s2", "other", false)
	step(a, "s1", "t2", false)
	step(b, "s1", "t2", false)
	got, err := s.SessionTurns(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	wa, wb := workdir(t, a), workdir(t, b)
	want := fmt.Sprint([]string{wb + " t2 true", wa + " t2 true", wa + " t1 false"})
	var seen []string
	for _, tr := range got {
		seen = append(seen, fmt.Sprintf("%s %s %v", tr.Project, tr.ID, tr.Open))
	}
	if fmt.Sprint(seen) != want {
		t.Errorf("session turns %v, want %v", seen, want)
	}
}

func workdir(t *testing.T, dir string) string {
	t.Helper()
	w, err := casckpt.Workdir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
