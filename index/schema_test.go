package index

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSchemaRaisedOnlyWhenRequired: a new database records SchemaBase, so
// an older casckpt still reads it; RequireSchema raises the version in the
// transaction that commits, never lowers it, and a database of a version
// above SchemaVersion is refused with ErrNewer, naming the upgrade.
func TestSchemaRaisedOnlyWhenRequired(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := Open(path, Options{Timeout: time.Second, Chunker: "c"})
	schema := func() (v uint32) {
		t.Helper()
		if err := db.View(func(tx *Tx) error { v = tx.Schema(); return nil }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := db.Update(func(*Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if v := schema(); v != SchemaBase {
		t.Fatalf("a new database records schema %d, want %d", v, SchemaBase)
	}
	failed := errors.New("rolled back")
	if err := db.Update(func(tx *Tx) error {
		if err := tx.RequireSchema(SchemaInline); err != nil {
			return err
		}
		return failed
	}); !errors.Is(err, failed) {
		t.Fatal(err)
	}
	if v := schema(); v != SchemaBase {
		t.Fatalf("after a rolled-back raise: schema %d, want %d", v, SchemaBase)
	}
	if err := db.Update(func(tx *Tx) error { return tx.RequireSchema(SchemaInline) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *Tx) error { return tx.RequireSchema(SchemaBase) }); err != nil {
		t.Fatal(err)
	}
	if v := schema(); v != SchemaInline {
		t.Fatalf("after raising to %d and requiring %d: schema %d", SchemaInline, SchemaBase, v)
	}
	if err := db.Update(func(tx *Tx) error { return tx.RequireSchema(SchemaVersion + 1) }); !errors.Is(err, ErrSchema) {
		t.Fatalf("requiring a schema this casckpt does not know: %v, want ErrSchema", err)
	}
	if err := db.Update(func(tx *Tx) error {
		return tx.tx.Bucket(bucketMeta).Put(keySchema, binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	err := db.View(func(*Tx) error { return nil })
	if !errors.Is(err, ErrNewer) || !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "upgrade casckpt") {
		t.Fatalf("a database of a newer schema: %v, want ErrNewer naming the upgrade", err)
	}
}
