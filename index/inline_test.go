package index

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// randomBytes returns n bytes drawn from seed.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestInlinePackPieces: an inline pack's bytes are stored in pieces of at
// most inlinePiece bytes, two of which fit a page (an empty pack as one
// empty piece); they read back byte-exact, count as one pack, and a pack's deletion
// takes all its pieces and nothing of its neighbours'. The schema is
// raised to SchemaInlinePieces, which an older casckpt refuses.
func TestInlinePackPieces(t *testing.T) {
	db := Open(filepath.Join(t.TempDir(), "db"), Options{Timeout: time.Second, Chunker: "c"})
	big, small := randomBytes(1, 3*inlinePiece+17), randomBytes(2, 100)
	var nBig, nSmall, nEmpty uint32
	err := db.Update(func(tx *Tx) error {
		for _, p := range []struct {
			n    *uint32
			data []byte
		}{{&nBig, big}, {&nSmall, small}, {&nEmpty, nil}} {
			info, err := tx.Objects().AddInlinePack([16]byte{byte(len(p.data))}, p.data)
			if err != nil {
				return err
			}
			*p.n = info.Number
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *Tx) error {
		if v := tx.Schema(); v != SchemaInlinePieces {
			t.Errorf("schema %d after an inline pack, want %d", v, SchemaInlinePieces)
		}
		// A page's header is 16 bytes, a leaf element's 16 and a key 6.
		if page := tx.tx.DB().Info().PageSize; 16+2*(16+6+inlinePiece) > page {
			t.Errorf("two pieces of %d bytes do not fit a page of %d", inlinePiece, page)
		}
		pieces := 0
		err := tx.bucket(bucketInline).ForEach(func(k, v []byte) error {
			if pieces++; len(k) != 6 || len(v) > inlinePiece {
				t.Errorf("inline bucket: key %x holds %d bytes; want keys of 6 bytes, at most %d", k, len(v), inlinePiece)
			}
			return nil
		})
		if want := (len(big)+inlinePiece-1)/inlinePiece + 2; err != nil || pieces != want {
			t.Errorf("inline bucket: %d pieces, %v; want %d", pieces, err, want)
		}
		for n, want := range map[uint32][]byte{nBig: big, nSmall: small, nEmpty: {}} {
			if got, err := tx.Objects().InlinePack(n); err != nil || !bytes.Equal(got, want) {
				t.Errorf("inline pack %d: %d bytes, %v; want its %d bytes", n, len(got), err, len(want))
			}
		}
		if n, size := tx.InlineBytes(); n != 3 || size != int64(len(big)+len(small)) {
			t.Errorf("InlineBytes %d packs, %d bytes; want 3, %d", n, size, len(big)+len(small))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error { return tx.Objects().DeletePack(nBig) }); err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *Tx) error {
		if _, err := tx.Objects().InlinePack(nBig); !errors.Is(err, cas.ErrCorrupt) {
			t.Errorf("a deleted inline pack reads: %v", err)
		}
		if got, err := tx.Objects().InlinePack(nSmall); err != nil || !bytes.Equal(got, small) {
			t.Errorf("its neighbour after the deletion: %d bytes, %v", len(got), err)
		}
		if n := tx.bucket(bucketInline).Stats().KeyN; n != 2 {
			t.Errorf("%d pieces left, want the neighbours' 2", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestInlinePackOneValue: an inline pack that a casckpt of SchemaInline
// stored as one value under its number reads, counts, survives in the
// remains of a damaged database and deletes as one in pieces does.
func TestInlinePackOneValue(t *testing.T) {
	db := Open(filepath.Join(t.TempDir(), "db"), Options{Timeout: time.Second, Chunker: "c"})
	data := randomBytes(3, 2*inlinePiece)
	name := [16]byte{7}
	var n uint32
	err := db.Update(func(tx *Tx) error {
		if err := tx.RequireSchema(SchemaInline); err != nil {
			return err
		}
		info, err := objectIndex{tx}.putPack(cas.PackInfo{Name: name, Size: int64(len(data)), Inline: true})
		if err != nil {
			return err
		}
		n = info.Number
		b, err := tx.tx.CreateBucketIfNotExists(bucketInline)
		if err != nil {
			return err
		}
		return b.Put(packKey(n), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *Tx) error {
		if got, err := tx.Objects().InlinePack(n); err != nil || !bytes.Equal(got, data) {
			t.Errorf("one-value inline pack: %d bytes, %v", len(got), err)
		}
		if c, size := tx.InlineBytes(); c != 1 || size != int64(len(data)) {
			t.Errorf("InlineBytes %d packs, %d bytes; want 1, %d", c, size, len(data))
		}
		out := map[[16]byte][]byte{}
		tx.inlinePacks(out)
		if !bytes.Equal(out[name], data) {
			t.Errorf("remains hold %d bytes of the pack, want %d", len(out[name]), len(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error { return tx.Objects().DeletePack(n) }); err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *Tx) error {
		return tx.tx.Bucket(bucketInline).ForEach(func(k, _ []byte) error {
			t.Errorf("key %x left after the deletion", k)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
