package index

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// bucketRemote (named "remote" on disk since the first bucket stores)
// holds what the cache of a bucket store knows of the bucket's journal: keys "k/<commit or dropped key>" of the objects already applied, "x/<snapshot ID>" of the snapshots a dropped marker
// names, "w" the watermark (see package internal/remote), "p" the
// probe's mark, "v" the view (Journal.View), "o/<workdir>" the projects
// this machine recorded (Journal.Own) and "r/<key>" the objects the fleet
// key refused (Journal.SetRejected).
var bucketRemote = []byte("remote")

var (
	keyWatermark = []byte("w")
	keyProbed    = []byte("p")
)

// Journal is what the records of a journaled store (a bucket store's
// cache, repo/bucket) keep of the journal they apply: what is applied,
// dropped, doomed, damaged or refused, the watermark, the view.
type Journal struct{ t *Tx }

// Journal returns the accessors of the records' knowledge of the journal.
func (t *Tx) Journal() Journal { return Journal{t} }

func (r Journal) put(key, value []byte) error {
	b, err := r.t.tx.CreateBucketIfNotExists(bucketRemote)
	if err != nil {
		return err
	}
	return b.Put(key, value)
}

// Watermark is the newest key time the cache applied (zero: none).
func (r Journal) Watermark() time.Time {
	v := r.t.get(bucketRemote, keyWatermark)
	if len(v) != 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v)))
}

// SetWatermark records the newest key time applied.
func (r Journal) SetWatermark(at time.Time) error {
	return r.put(keyWatermark, binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())))
}

// Probed reports whether the server's conditional writes were checked.
func (r Journal) Probed() bool { return r.t.get(bucketRemote, keyProbed) != nil }

// SetProbed records that the server's conditional writes were checked.
func (r Journal) SetProbed() error { return r.put(keyProbed, []byte{1}) }

// Applied reports whether the object under key (a commit or dropped key)
// was applied to the cache.
func (r Journal) Applied(key string) bool {
	return r.t.get(bucketRemote, append([]byte("k/"), key...)) != nil
}

// SetApplied records that the object under key was applied.
func (r Journal) SetApplied(key string) error { return r.put(append([]byte("k/"), key...), []byte{}) }

// Dropped reports whether a dropped marker names snapshot id.
func (r Journal) Dropped(id cas.ID) bool {
	return r.t.get(bucketRemote, append([]byte("x/"), id[:]...)) != nil
}

// SetDropped records that a dropped marker names snapshot id.
func (r Journal) SetDropped(id cas.ID) error { return r.put(append([]byte("x/"), id[:]...), []byte{}) }

// AddedPacks are the packs recorded in this transaction (by
// cas.IndexWriter.AddPack), in order.
func (t *Tx) AddedPacks() []cas.PackInfo { return t.added }

// prefixDoomed keys "g/<pack name>": the packs that a gc's pending list
// names or that a gc deleted. Writers treat their objects as absent.
var prefixDoomed = []byte("g/")

// SetDoomed records that a gc's pending list names pack name, or that a
// gc deleted it.
func (r Journal) SetDoomed(name [16]byte) error {
	return r.put(append(bytes.Clone(prefixDoomed), name[:]...), []byte{})
}

// DoomedPacks returns the names of the packs SetDoomed recorded.
func (r Journal) DoomedPacks() map[[16]byte]bool {
	out := map[[16]byte]bool{}
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return out
	}
	c := b.Cursor()
	for k, _ := c.Seek(prefixDoomed); bytes.HasPrefix(k, prefixDoomed); k, _ = c.Next() {
		if len(k) == len(prefixDoomed)+16 {
			out[[16]byte(k[len(prefixDoomed):])] = true
		}
	}
	return out
}

// prefixUnread keys "u/<commit key>": commits the cache could not read
// whole (damaged, or written by a newer casckpt).
var prefixUnread = []byte("u/")

// SetUnread records that the commit under key could not be read whole.
func (r Journal) SetUnread(key string) error {
	return r.put(append(bytes.Clone(prefixUnread), key...), []byte{})
}

// FirstUnread returns the key of a commit SetUnread recorded, or "".
func (r Journal) FirstUnread() string {
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return ""
	}
	if k, _ := b.Cursor().Seek(prefixUnread); bytes.HasPrefix(k, prefixUnread) {
		return string(k[len(prefixUnread):])
	}
	return ""
}

// EachApplied calls fn with every applied key that starts with prefix, in
// key order.
func (r Journal) EachApplied(prefix string, fn func(key string) error) error {
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return nil
	}
	p := append([]byte("k/"), prefix...)
	c := b.Cursor()
	for k, _ := c.Seek(p); bytes.HasPrefix(k, p); k, _ = c.Next() {
		if err := fn(string(k[2:])); err != nil {
			return err
		}
	}
	return nil
}

// prefixOwn keys "o/<workdir>": the projects this machine snapshotted
// itself, as opposed to those only a record from the bucket names.
var prefixOwn = []byte("o/")

// Own reports whether this machine recorded project workdir itself
// (SetOwn); a project that only records from the bucket name is not.
func (r Journal) Own(workdir string) bool {
	return r.t.get(bucketRemote, append(bytes.Clone(prefixOwn), workdir...)) != nil
}

// SetOwn records that this machine snapshotted project workdir itself.
func (r Journal) SetOwn(workdir string) error {
	return r.put(append(bytes.Clone(prefixOwn), workdir...), []byte{})
}

// OwnWorkdirs returns the workdirs SetOwn recorded, in order.
func (r Journal) OwnWorkdirs() []string {
	out := []string{}
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return out
	}
	c := b.Cursor()
	for k, _ := c.Seek(prefixOwn); bytes.HasPrefix(k, prefixOwn); k, _ = c.Next() {
		out = append(out, string(k[len(prefixOwn):]))
	}
	return out
}

// keyView is the key of the view the cache was built for: the machine
// and fleet key its records were applied with (an opaque string the
// caller makes; absent in a cache older than machines).
var keyView = []byte("v")

// View returns the view SetView recorded; ok is false when none was.
func (r Journal) View() (view string, ok bool) {
	v := r.t.get(bucketRemote, keyView)
	return string(v), v != nil
}

// SetView records the view the cache's records were applied with.
func (r Journal) SetView(view string) error { return r.put(keyView, []byte(view)) }

// prefixRejected keys "r/<key>": objects of the bucket that the fleet
// key refused, with why.
var prefixRejected = []byte("r/")

// SetRejected records that the object under key was refused, and why.
func (r Journal) SetRejected(key, why string) error {
	return r.put(append(bytes.Clone(prefixRejected), key...), []byte(why))
}

// Rejected reports whether SetRejected recorded the object under key.
func (r Journal) Rejected(key string) bool {
	return r.t.get(bucketRemote, append(bytes.Clone(prefixRejected), key...)) != nil
}

// EachRejected calls fn with every object SetRejected recorded, in key
// order.
func (r Journal) EachRejected(fn func(key, why string) error) error {
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(prefixRejected); bytes.HasPrefix(k, prefixRejected); k, v = c.Next() {
		if err := fn(string(k[len(prefixRejected):]), string(v)); err != nil {
			return err
		}
	}
	return nil
}

// prefixDamaged keys "d/<key>", valued with the reason: objects of the
// bucket a sync skipped because they are damaged (a commit that does not
// decode, is too large, or names a pack of another size than it says).
var prefixDamaged = []byte("d/")

// SetDamaged records that the object under key is damaged, and why.
func (r Journal) SetDamaged(key, reason string) error {
	return r.put(append(bytes.Clone(prefixDamaged), key...), []byte(reason))
}

// EachDamaged calls fn with every object SetDamaged recorded, in key
// order.
func (r Journal) EachDamaged(fn func(key, reason string) error) error {
	b := r.t.bucket(bucketRemote)
	if b == nil {
		return nil
	}
	c := b.Cursor()
	for k, v := c.Seek(prefixDamaged); bytes.HasPrefix(k, prefixDamaged); k, v = c.Next() {
		if err := fn(string(k[len(prefixDamaged):]), string(v)); err != nil {
			return err
		}
	}
	return nil
}
