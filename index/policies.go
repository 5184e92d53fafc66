package index

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"time"
)

// policyVersion is the format version of policy records.
const policyVersion = 1

var bucketPolicies = []byte("policies")

// Policy is a project's lifecycle and retention policy (casckpt policy).
// The zero Policy is the default: no lifecycle, not a test, no own
// retention or keep, cleanup on.
type Policy struct {
	Workdir string
	// Lifecycle is "", "running", "completed" or "failed".
	Lifecycle string
	// LifecycleSince is when Lifecycle last changed (zero with none).
	LifecycleSince time.Time
	Test           bool
	// RetentionDays, when positive, replaces prune's days of the
	// project's lifecycle.
	RetentionDays int
	// Keep, when positive, is the keep rule of a snapshot that names none.
	Keep      int
	NoCleanup bool
	// Set is when the policy was last changed: of two records of one
	// project, the later Set wins.
	Set time.Time
}

// EncodePolicy returns the stored form of p, its workdir included: the
// value of its record and of a bucket's policy record.
func EncodePolicy(p Policy) []byte {
	b := []byte{policyVersion}
	b = appendString(b, p.Workdir)
	b = appendString(b, p.Lifecycle)
	b = appendTime(b, p.LifecycleSince)
	var flags byte
	if p.Test {
		flags |= 1
	}
	if p.NoCleanup {
		flags |= 2
	}
	b = append(b, flags)
	b = appendUint(b, p.RetentionDays)
	b = appendUint(b, p.Keep)
	return appendTime(b, p.Set)
}

// DecodePolicy reads what EncodePolicy wrote.
func DecodePolicy(b []byte) (Policy, error) {
	r := reader{b: b}
	if r.byte() != policyVersion {
		return Policy{}, fmt.Errorf("%w: policy: unknown version", ErrCorrupt)
	}
	p := Policy{Workdir: r.string(), Lifecycle: r.string(), LifecycleSince: r.time()}
	flags := r.byte()
	p.Test, p.NoCleanup = flags&1 != 0, flags&2 != 0
	p.RetentionDays, p.Keep = int(r.uvarint()), int(r.uvarint())
	p.Set = r.time()
	switch {
	case flags > 3:
		r.fail("unknown flags")
	case p.Lifecycle != "" && p.Lifecycle != "running" && p.Lifecycle != "completed" && p.Lifecycle != "failed":
		r.fail("unknown lifecycle")
	case p.Workdir == "":
		r.fail("no workdir")
	}
	if err := r.done(); err != nil {
		return Policy{}, fmt.Errorf("policy: %w", err)
	}
	return p, nil
}

// appendUint appends a count that is never negative as an uvarint.
func appendUint(b []byte, n int) []byte { return binary.AppendUvarint(b, uint64(max(n, 0))) }

// Policy returns project workdir's policy (the zero Policy, with its
// workdir, when it has none).
func (t *Tx) Policy(workdir string) (Policy, error) {
	b := t.bucket(bucketPolicies)
	if b == nil {
		return Policy{Workdir: workdir}, nil
	}
	v := b.Get([]byte(workdir))
	if v == nil {
		return Policy{Workdir: workdir}, nil
	}
	p, err := DecodePolicy(v)
	if err == nil && p.Workdir != workdir {
		err = fmt.Errorf("%w: policy of %s names %s", ErrCorrupt, workdir, p.Workdir)
	}
	return p, err
}

// PutPolicy stores p as its project's policy.
func (t *Tx) PutPolicy(p Policy) error {
	b, err := t.tx.CreateBucketIfNotExists(bucketPolicies)
	if err != nil {
		return err
	}
	return b.Put([]byte(p.Workdir), EncodePolicy(p))
}

// ApplyPolicy stores p unless the record of its project was set later
// (the last writer by time wins): how a bucket's policy records apply.
func (t *Tx) ApplyPolicy(p Policy) error {
	cur, err := t.Policy(p.Workdir)
	if err != nil || cur.Set.After(p.Set) {
		return err
	}
	return t.PutPolicy(p)
}

// Policies returns every policy record, by workdir.
func (t *Tx) Policies() (map[string]Policy, error) {
	out := map[string]Policy{}
	b := t.bucket(bucketPolicies)
	if b == nil {
		return out, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		p, err := DecodePolicy(v)
		if err != nil {
			return fmt.Errorf("policy of %s: %w", k, err)
		}
		out[string(k)] = p
		return nil
	})
	return out, err
}

func (t *Tx) deletePolicy(workdir string) error {
	if b := t.tx.Bucket(bucketPolicies); b != nil {
		return b.Delete([]byte(workdir))
	}
	return nil
}

// policyBackupVersion is the format version of policy backups: unlike
// any record backup's or turn backup's, so that a repair tells them apart.
const policyBackupVersion = 0x82

// EncodePolicyBackup returns the backup of policy record p that is stored
// in the packs, as an object of kind cas.KindRecord, when p is set on a
// store whose database is the truth, so that a repair of a lost database
// rebuilds it. Its ID is a function of p alone (cas.Sum): gc keeps the
// backup of each project's current policy alive by it.
func EncodePolicyBackup(p Policy) []byte {
	return append([]byte{policyBackupVersion}, EncodePolicy(p)...)
}

// DecodePolicyBackup parses a policy backup made by EncodePolicyBackup.
func DecodePolicyBackup(b []byte) (Policy, error) {
	if len(b) == 0 || b[0] != policyBackupVersion {
		return Policy{}, fmt.Errorf("%w: policy backup: unknown version", ErrCorrupt)
	}
	p, err := DecodePolicy(b[1:])
	if err == nil && (!filepath.IsAbs(p.Workdir) || filepath.Clean(p.Workdir) != p.Workdir) {
		err = fmt.Errorf("%w: policy backup: workdir is not a clean absolute path", ErrCorrupt)
	}
	if err != nil {
		return Policy{}, fmt.Errorf("policy backup: %w", err)
	}
	return p, nil
}
