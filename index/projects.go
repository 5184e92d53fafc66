package index

import (
	"encoding/binary"
	"fmt"
	"time"
)

// recordVersion is the format version of snapshot and stat cache records.
// Project records have their own versions (projectVersion1, 2).
const recordVersion = 1

// The versions of project records: version 1 holds the times alone;
// version 2 adds the identity of the workdir's parent directory. A record
// without a parent identity is still written as version 1, so that every
// record has one encoding.
const (
	projectVersion1 = 1
	projectVersion2 = 2
)

var bucketProjects = []byte("projects")

// DirID identifies a directory on its file system: its device and inode
// numbers. The zero DirID means "not recorded".
type DirID struct {
	Dev, Ino uint64
}

// IsZero reports whether id is the zero DirID.
func (id DirID) IsZero() bool { return id == DirID{} }

// Project is a working directory known to the store.
type Project struct {
	Workdir   string
	Created   time.Time
	LastTouch time.Time
	// Parent identifies the directory that held Workdir when the project
	// was last snapshotted; zero when not recorded (records written before
	// it was, projects only imported or rebuilt by a repair).
	Parent DirID
}

// encodeProject returns the stored form of p (without its workdir, the key).
func encodeProject(p Project) []byte {
	version := byte(projectVersion2)
	if p.Parent.IsZero() {
		version = projectVersion1
	}
	b := []byte{version}
	b = binary.AppendVarint(b, p.Created.UnixNano())
	b = binary.AppendVarint(b, p.LastTouch.UnixNano())
	if version == projectVersion2 {
		b = binary.AppendUvarint(b, p.Parent.Dev)
		b = binary.AppendUvarint(b, p.Parent.Ino)
	}
	return b
}

// decodeProject parses a project record stored under workdir, of either
// version.
func decodeProject(workdir string, v []byte) (Project, error) {
	r := reader{b: v}
	version := r.byte()
	if r.err == nil && version != projectVersion1 && version != projectVersion2 {
		return Project{}, fmt.Errorf("%w: project %s: unknown version", ErrCorrupt, workdir)
	}
	p := Project{Workdir: workdir, Created: r.time(), LastTouch: r.time()}
	if version == projectVersion2 {
		p.Parent = DirID{Dev: r.uvarint(), Ino: r.uvarint()}
		if r.err == nil && p.Parent.IsZero() {
			r.fail("version 2 project record without a parent identity")
		}
	}
	if err := r.done(); err != nil {
		return Project{}, fmt.Errorf("project %s: %w", workdir, err)
	}
	return p, nil
}

// Project returns the project record of workdir, if any.
func (t *Tx) Project(workdir string) (Project, bool, error) {
	v := t.get(bucketProjects, []byte(workdir))
	if v == nil {
		return Project{}, false, nil
	}
	p, err := decodeProject(workdir, v)
	return p, err == nil, err
}

// PutProject stores p.
func (t *Tx) PutProject(p Project) error {
	return t.tx.Bucket(bucketProjects).Put([]byte(p.Workdir), encodeProject(p))
}

// Projects lists every project, in workdir order.
func (t *Tx) Projects() ([]Project, error) {
	out := []Project{}
	b := t.bucket(bucketProjects)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		p, err := decodeProject(string(k), v)
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	return out, err
}

// HasSnapshots reports whether the store holds a snapshot of workdir,
// without reading any.
func (t *Tx) HasSnapshots(workdir string) bool {
	b := t.projectBucket(bucketSnapshots, workdir)
	if b == nil {
		return false
	}
	k, _ := b.Cursor().First()
	return k != nil
}

// ProjectSnapshots is a project with its snapshots, newest first.
type ProjectSnapshots struct {
	Project
	Snapshots []Snapshot
}

// EachProject calls fn for every project with its snapshots, in workdir
// order: the one loop over projects and snapshots that listings, retention
// and verification share.
func (t *Tx) EachProject(fn func(ProjectSnapshots) error) error {
	projects, err := t.Projects()
	if err != nil {
		return err
	}
	for _, p := range projects {
		snaps, err := t.Snapshots(p.Workdir)
		if err != nil {
			return err
		}
		if err := fn(ProjectSnapshots{p, snaps}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteProject removes a project with its snapshots, turns, stat cache,
// write ledger and policy; the backups of its snapshot and turn records get tombstones
// (see Tombstones).
func (t *Tx) DeleteProject(workdir string) error {
	key := []byte(workdir)
	snaps, err := t.Snapshots(workdir)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if err := t.addTombstone(s.BackupID); err != nil {
			return err
		}
	}
	turns, err := t.Turns(workdir)
	if err != nil {
		return err
	}
	for _, tr := range turns {
		if err := t.addTombstone(tr.BackupID); err != nil {
			return err
		}
	}
	for _, name := range [][]byte{bucketSnapshots, bucketStatCache, bucketTurns, bucketLedger} {
		if b := t.tx.Bucket(name); b != nil && b.Bucket(key) != nil {
			if err := b.DeleteBucket(key); err != nil {
				return err
			}
		}
	}
	if err := t.deletePolicy(workdir); err != nil {
		return err
	}
	return t.tx.Bucket(bucketProjects).Delete(key)
}
