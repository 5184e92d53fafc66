package index

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/casckpt/casckpt/cas"
)

// Remains is what could be read of a possibly damaged database, for a
// repair to keep.
type Remains struct {
	Projects   map[string]Project    // by workdir
	Snapshots  map[string][]Snapshot // of the projects whose snapshots read whole
	Turns      map[string][]Turn     // of the projects whose turns read whole
	Origins    map[string]cas.ID
	Tombstones map[cas.ID][16]byte
	Policies   map[string]Policy // by workdir
	// InlinePacks are the bytes of the inline packs that read whole, by
	// pack name: a rebuild from the pack files writes them out first.
	InlinePacks map[[16]byte][]byte
}

// ReadRemains reads what it can of the database: each part that fails to
// read (an error, or a panic of bbolt on a damaged page) is left out, and a
// database that cannot be opened at all yields empty Remains. A database
// that a newer casckpt wrote is refused: a rebuild to this version's format
// would lose its records.
func (d *DB) ReadRemains() (Remains, error) {
	rem := Remains{Projects: map[string]Project{}, Snapshots: map[string][]Snapshot{}, Turns: map[string][]Turn{}, Origins: map[string]cas.ID{}, Tombstones: map[cas.ID][16]byte{}, Policies: map[string]Policy{}}
	if !d.Exists() {
		return rem, nil
	}
	var db *bolt.DB
	err := guard(func() (err error) { db, err = d.open(true); return err })
	if errors.Is(err, ErrNewer) {
		return rem, fmt.Errorf("repair refused: %w", err)
	}
	if err != nil {
		return rem, nil
	}
	defer guard(db.Close)
	part := func(fn func(t *Tx) error) error {
		return guard(func() error { return db.View(func(tx *bolt.Tx) error { return fn(&Tx{tx: tx}) }) })
	}
	var projects []Project
	_ = part(func(t *Tx) error { projects = t.decodableProjects(); return nil })
	for _, p := range projects {
		rem.Projects[p.Workdir] = p
		var list []Snapshot
		if part(func(t *Tx) (err error) { list, err = t.Snapshots(p.Workdir); return err }) == nil {
			rem.Snapshots[p.Workdir] = list
		}
		var turns []Turn
		if part(func(t *Tx) (err error) { turns, err = t.Turns(p.Workdir); return err }) == nil {
			rem.Turns[p.Workdir] = turns
		}
	}
	var origins map[string]cas.ID
	if part(func(t *Tx) (err error) { origins, err = t.Origins(); return err }) == nil {
		rem.Origins = origins
	}
	var tombstones map[cas.ID][16]byte
	if part(func(t *Tx) (err error) { tombstones, err = t.Tombstones(); return err }) == nil {
		rem.Tombstones = tombstones
	}
	var policies map[string]Policy
	if part(func(t *Tx) (err error) { policies, err = t.Policies(); return err }) == nil {
		rem.Policies = policies
	}
	rem.InlinePacks = map[[16]byte][]byte{}
	_ = part(func(t *Tx) error { t.inlinePacks(rem.InlinePacks); return nil })
	return rem, nil
}

// inlinePacks adds to out the inline packs whose records and bytes read,
// each copied out of the database.
func (t *Tx) inlinePacks(out map[[16]byte][]byte) {
	packs, _ := objectIndex{t}.Packs()
	for _, p := range packs {
		if !p.Inline {
			continue
		}
		if v, _ := readInline(t.bucket(bucketInline), p.Number); int64(len(v)) == p.Size {
			out[p.Name] = v
		}
	}
}

// decodableProjects lists the project records that decode, leaving out
// those that do not (a damaged database's), where Projects stops at the
// first.
func (t *Tx) decodableProjects() []Project {
	var out []Project
	if b := t.bucket(bucketProjects); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			if p, err := decodeProject(string(k), v); err == nil && p.Workdir != "" {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}
