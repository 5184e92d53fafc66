package main

import (
	"bytes"
	binenc "encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/index"
)

// TestRepairRefusesAStoreOfANewerVersion: repair, like every command,
// refuses a database that a newer casckpt wrote, instead of rebuilding it
// in this version's format and losing what it cannot read (pins).
func TestRepairRefusesAStoreOfANewerVersion(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	e.ok("snapshot", dir)
	e.ok("pin", dir, "@1")
	dbPath := filepath.Join(e.store, "casckpt.db")
	db, err := bolt.Open(dbPath, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), binenc.BigEndian.AppendUint32(nil, index.SchemaVersion+1))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(dbPath)
	for _, args := range [][]string{{"repair"}, {"list", dir}} {
		r := e.run(args...)
		failsWith(t, r, 1, "upgrade casckpt")
	}
	after, _ := os.ReadFile(dbPath)
	if !bytes.Equal(before, after) {
		t.Fatal("repair changed the newer version's database")
	}
	entries, _ := os.ReadDir(e.store)
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), "casckpt.db.") {
			t.Fatalf("repair left %s: it rebuilt the database", en.Name())
		}
	}
}
