package casckpt_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

func TestStoreIsPrivateAndHoldsNoSecrets(t *testing.T) {
	s := openStore(t)
	dir := t.TempDir()
	secret := "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-only-in-env"
	testtree.Write(t, dir, testtree.Tree{".env": {Data: secret}, ".env.production": {Data: secret}, "app.py": {Data: "print(1)\n"}})
	mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	checkPrivate(t, s)
	// A repair's new database and the old one it keeps are private too.
	if _, err := s.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkPrivate(t, s)
}

// checkPrivate fails unless every directory of the store is 0700, every
// file 0600 or stricter, and no file holds the secret of the .env file.
func checkPrivate(t *testing.T, s *casckpt.Store) {
	t.Helper()
	err := filepath.WalkDir(s.Location(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, _ := d.Info()
		if d.IsDir() && info.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", p, info.Mode().Perm())
		}
		if !d.IsDir() && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want 0600", p, info.Mode().Perm())
		}
		if !d.IsDir() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte("wJalrXUtnFEMI")) {
				t.Errorf("%s holds the secret from .env", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestTruncatedAndMissingPacks(t *testing.T) {
	casckpt.FilePacksOnly(t) // a pack file per snapshot, to damage
	ctx := context.Background()
	s := openStore(t)
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{"a.txt": {Data: "first"}})
	first := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	randomFile(t, filepath.Join(dir, "b.bin"), 100_000)
	second := mustSnapshot(t, s, dir, casckpt.SnapshotOptions{})
	packs, _ := filepath.Glob(filepath.Join(s.Location(), "packs", "*.pack"))
	if len(packs) != 2 {
		t.Fatalf("%d packs, want one per snapshot", len(packs))
	}
	// Find the second snapshot's pack: the larger one.
	newer := packs[0]
	if st0, st1 := fileSize(t, packs[0]), fileSize(t, packs[1]); st1 > st0 {
		newer = packs[1]
	}
	for name, damage := range map[string]func(){
		"truncated": func() { os.Truncate(newer, fileSize(t, newer)/2) },
		"missing":   func() { os.Remove(newer) },
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := os.ReadFile(newer)
			defer os.WriteFile(newer, b, 0o600)
			damage()
			v, err := s.Verify(ctx)
			if err != nil || len(v.Damaged) != 1 || v.Damaged[0].ID != second.ID {
				t.Fatalf("verify: %+v %v", v, err)
			}
			os.Remove(filepath.Join(dir, "b.bin"))
			_, err = s.Restore(ctx, dir, casckpt.Ref(second.ID.String()), casckpt.RestoreOptions{})
			if !errors.Is(err, casckpt.ErrDamaged) {
				t.Fatalf("restore of the damaged snapshot: %v", err)
			}
			if _, err := s.Restore(ctx, dir, casckpt.Ref(first.ID.String()), casckpt.RestoreOptions{}); err != nil {
				t.Fatalf("restore of the intact snapshot: %v", err)
			}
			list, err := s.List(ctx, dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list {
				if e.ID == second.ID && !e.Damaged {
					t.Fatal("list does not mark the damaged snapshot")
				}
			}
		})
	}
}

func fileSize(t *testing.T, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
