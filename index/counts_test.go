package index

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/cas"
)

func TestChangeCountsCacheAndDrop(t *testing.T) {
	db := testDB(t)
	a, b, c, empty := cas.ID{1}, cas.ID{2}, cas.ID{3}, cas.ID{9}
	want := map[[2]cas.ID]Counts{
		{a, b}:     {Files: 2, Insertions: 10, Deletions: 1 << 40},
		{b, c}:     {Files: 1},
		{empty, a}: {Files: 5, Insertions: 7},
	}
	err := db.Update(func(tx *Tx) error {
		if _, ok := tx.ChangeCounts(a, b); ok {
			t.Error("counts before any were put")
		}
		for k, v := range want {
			if err := tx.PutChangeCounts(k[0], k[1], v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(gone ...cas.ID) {
		t.Helper()
		err := db.View(func(tx *Tx) error {
			for k, v := range want {
				got, ok := tx.ChangeCounts(k[0], k[1])
				dropped := slices.Contains(gone, k[0]) || slices.Contains(gone, k[1])
				if ok == dropped || (ok && got != v) {
					t.Errorf("counts %x..%x: got %+v, %v; want %+v, kept %v", k[0][:1], k[1][:1], got, ok, v, !dropped)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check()
	// The empty tree is never gone; a swept tree takes both its pairs along.
	err = db.Update(func(tx *Tx) error {
		n, err := tx.DropChangeCounts(func(id cas.ID) bool { return id == c || id == empty }, empty)
		if n != 1 {
			t.Errorf("dropped %d entries, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	check(c)
	err = db.Update(func(tx *Tx) error {
		_, err := tx.DropChangeCounts(func(id cas.ID) bool { return id == a }, empty)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	check(a, c)
}

func TestTryUpdateNeverWaits(t *testing.T) {
	db := testDB(t)
	if err := db.TryUpdate(func(*Tx) error { return nil }); !errors.Is(err, ErrBusy) || db.Exists() {
		t.Fatalf("TryUpdate on no database: %v (exists %v), want ErrBusy and nothing made", err, db.Exists())
	}
	put := func(tx *Tx) error { return tx.PutChangeCounts(cas.ID{1}, cas.ID{2}, Counts{Files: 1}) }
	err := db.Update(func(*Tx) error {
		if err := db.TryUpdate(put); !errors.Is(err, ErrBusy) {
			t.Errorf("TryUpdate while another transaction writes: %v, want ErrBusy", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TryUpdate(put); err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *Tx) error {
		if c, ok := tx.ChangeCounts(cas.ID{1}, cas.ID{2}); !ok || c.Files != 1 {
			t.Errorf("counts after TryUpdate: %+v, %v", c, ok)
		}
		return nil
	})
}

func FuzzDecodeCounts(f *testing.F) {
	f.Add(encodeCounts(Counts{Files: 3, Insertions: 1 << 33, Deletions: 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCounts(b)
		if err == nil && !bytes.Equal(encodeCounts(c), b) {
			t.Fatal("counts record does not re-encode to its input")
		}
	})
}
