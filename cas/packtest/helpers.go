package packtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

// NewName returns a fresh random pack name.
func NewName() string {
	var p cas.PackInfo
	rand.Read(p.Name[:]) // never fails (crypto/rand)
	return p.FileName()
}

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// put stores data as pack name, written in pieces of up to 1000 bytes.
func put(t testing.TB, s cas.PackStore, name string, data []byte) {
	t.Helper()
	if err := tryPut(s, name, data); err != nil {
		t.Fatal(err)
	}
}

// tryPut is put for any goroutine.
func tryPut(s cas.PackStore, name string, data []byte) error {
	w, err := s.Create(context.Background(), name)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1000)
		if k, err := w.Write(rest[:n]); err != nil || k != n {
			w.Abort()
			return fmt.Errorf("write %s: %d of %d bytes, %v", name, k, n, err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

// get reads pack name whole, through a reader of the size it says.
func get(t testing.TB, s cas.PackStore, name string) []byte {
	t.Helper()
	b, err := tryGet(s, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tryGet is get for any goroutine.
func tryGet(s cas.PackStore, name string) ([]byte, error) {
	r, err := s.Open(context.Background(), name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}

// listed returns the packs s lists, sorted by name.
func listed(t testing.TB, s cas.PackStore) []cas.StoredPack {
	t.Helper()
	var packs []cas.StoredPack
	if err := s.List(context.Background(), func(p cas.StoredPack) error {
		packs = append(packs, p)
		return nil
	}); err != nil {
		t.Fatalf("list: %v", err)
	}
	slices.SortFunc(packs, func(a, b cas.StoredPack) int { return strings.Compare(a.Name, b.Name) })
	return packs
}

// checkGone fails unless pack name is neither opened, stated nor listed.
func checkGone(t testing.TB, s cas.PackStore, name string) {
	t.Helper()
	ctx := context.Background()
	if r, err := s.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			r.Close()
		}
		t.Fatalf("open %s: %v, want an error matching fs.ErrNotExist", name, err)
	}
	if _, err := s.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: %v, want an error matching fs.ErrNotExist", name, err)
	}
	for _, p := range listed(t, s) {
		if p.Name == name {
			t.Fatalf("%s is listed", name)
		}
	}
}

// createFails writes data as pack name and returns the error of Create,
// of Close, or of the Sync after it (a store that completes packs in the
// background reports their failures there); a Write error fails the test.
func createFails(t *testing.T, s cas.PackStore, name string, data []byte) error {
	t.Helper()
	w, err := s.Create(context.Background(), name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		t.Fatalf("write: %v", err)
	}
	return closeSync(s, w)
}

// closeSync closes w, then syncs s: it returns the first error.
func closeSync(s cas.PackStore, w cas.PackWriter) error {
	if err := w.Close(); err != nil {
		return err
	}
	return s.Sync(context.Background())
}

// upperHex returns name with its hex digits in upper case.
func upperHex(name string) string { return strings.ToUpper(name[:32]) + name[32:] }
