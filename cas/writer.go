package cas

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// PackTargetSize is the size at which a Writer closes a pack and starts the
// next one.
const PackTargetSize = 8 << 20

// TempPrefix starts the names of pack files still being written.
const TempPrefix = ".tmp-"

// Existing answers whether an object is already stored. *Store implements it.
type Existing interface {
	Has(id ID) (bool, error)
}

// WriteStats counts what a Writer stored.
type WriteStats struct {
	Objects     int   // new objects written
	RawBytes    int64 // their plain size
	StoredBytes int64 // their size in packs
}

// File is what a Writer needs of an open pack file.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// FS is the file system packs are written and deleted through: OS, or in
// tests one that fails on demand, so that every write, sync, rename and
// removal of a snapshot or a sweep can be made to fail.
type FS interface {
	Create(name string) (File, error) // exclusive create, mode 0600
	Rename(oldname, newname string) error
	Remove(name string) error
	SyncDir(dir string) error
}

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error             { return SyncDir(dir) }

// Writer appends new objects to fresh pack files. Put is safe for concurrent
// use; Flush, Commit and Abort are not, and are called once the Puts are done.
type Writer struct {
	dir      string
	existing Existing
	fs       FS

	mu        sync.Mutex
	pending   map[ID]struct{}
	cur       *packBuilder
	finished  []*packBuilder
	committed bool
	stats     WriteStats
	err       error // sticky: a failed pack write fails the Writer
}

var _ Putter = (*Writer)(nil)

// NewWriter returns a Writer that stores into the packs directory dir, through
// fsys (nil means OS), every object that existing does not hold. existing may
// be nil (store all).
func NewWriter(fsys FS, dir string, existing Existing) *Writer {
	if fsys == nil {
		fsys = OS
	}
	return &Writer{dir: dir, existing: existing, fs: fsys, pending: map[ID]struct{}{}}
}

type packBuilder struct {
	name    [16]byte
	temp    string
	file    File
	buf     *bufio.Writer
	size    int64
	entries []PackEntry
}

// Put stores data unless it is stored already or pending in this Writer.
func (w *Writer) Put(ctx context.Context, kind Kind, data []byte) (ID, error) {
	if err := ctx.Err(); err != nil {
		return ID{}, err
	}
	if len(data) > MaxObjectSize {
		return ID{}, fmt.Errorf("object of %d bytes is over the %d-byte limit", len(data), MaxObjectSize)
	}
	id := Sum(kind, data)
	w.mu.Lock()
	_, dup := w.pending[id]
	w.mu.Unlock()
	if dup {
		return id, nil
	}
	if w.existing != nil {
		has, err := w.existing.Has(id)
		if err != nil || has {
			return id, err
		}
	}
	codec, stored, err := compress(data)
	if err != nil {
		return ID{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.pending[id]; dup {
		return id, nil
	}
	if err := w.appendLocked(PackEntry{ID: id, Kind: kind, Codec: codec, RawLen: uint32(len(data)), StoredLen: uint32(len(stored))}, stored); err != nil {
		return ID{}, err
	}
	w.stats.Objects++
	w.stats.RawBytes += int64(len(data))
	return id, nil
}

// putStored appends an already compressed object (for repacking).
func (w *Writer) putStored(e PackEntry, stored []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.pending[e.ID]; dup {
		return nil
	}
	return w.appendLocked(e, stored)
}

func (w *Writer) appendLocked(e PackEntry, stored []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.committed {
		return errors.New("cas: Put after Commit")
	}
	if w.cur == nil {
		if w.err = w.startPack(); w.err != nil {
			return w.err
		}
	}
	p := w.cur
	e.Offset = uint32(p.size)
	hdr := appendObjectHeader(make([]byte, 0, objectHeaderSize), e)
	if _, err := p.buf.Write(hdr); err != nil {
		w.err = fmt.Errorf("write pack: %w", err)
		return w.err
	}
	if _, err := p.buf.Write(stored); err != nil {
		w.err = fmt.Errorf("write pack: %w", err)
		return w.err
	}
	p.size += objectHeaderSize + int64(len(stored))
	p.entries = append(p.entries, e)
	w.pending[e.ID] = struct{}{}
	w.stats.StoredBytes += objectHeaderSize + int64(len(stored))
	if p.size >= PackTargetSize {
		w.err = w.finishPack()
	}
	return w.err
}

func (w *Writer) startPack() error {
	p := &packBuilder{}
	if _, err := rand.Read(p.name[:]); err != nil {
		return err
	}
	p.temp = filepath.Join(w.dir, TempPrefix+hex.EncodeToString(p.name[:]))
	f, err := w.fs.Create(p.temp)
	if err != nil {
		return fmt.Errorf("create pack: %w", err)
	}
	p.file = f
	p.buf = bufio.NewWriterSize(f, 1<<20)
	if _, err := p.buf.WriteString(packMagic); err != nil {
		f.Close()
		w.fs.Remove(p.temp)
		return fmt.Errorf("write pack: %w", err)
	}
	p.size = packHeaderSize
	w.cur = p
	return nil
}

// finishPack writes the trailer, fsyncs and renames the current pack.
func (w *Writer) finishPack() error {
	p := w.cur
	w.cur = nil
	trailer := encodeTrailer(p.entries)
	err := func() error {
		if _, err := p.buf.Write(trailer); err != nil {
			return err
		}
		if err := p.buf.Flush(); err != nil {
			return err
		}
		if err := p.file.Sync(); err != nil {
			return err
		}
		return p.file.Close()
	}()
	if err == nil {
		p.size += int64(len(trailer))
		err = w.fs.Rename(p.temp, filepath.Join(w.dir, PackInfo{Name: p.name}.FileName()))
	}
	if err != nil {
		p.file.Close()
		w.fs.Remove(p.temp)
		return fmt.Errorf("write pack: %w", err)
	}
	w.finished = append(w.finished, p)
	return nil
}

// Flush closes the open pack and makes every pack durable: after it returns
// nil the new objects are on disk, ready for Commit.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.cur != nil {
		if w.err = w.finishPack(); w.err != nil {
			return w.err
		}
	}
	if len(w.finished) == 0 {
		return nil
	}
	if w.err = w.fs.SyncDir(w.dir); w.err != nil {
		return w.err
	}
	return nil
}

// Stats returns what the Writer stored so far.
func (w *Writer) Stats() WriteStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Commit records the flushed packs and their objects in the object index
// of the caller's write transaction. Objects that another writer committed
// meanwhile keep their first location; with replace, existing locations are
// overwritten (repacking). Every flushed pack must still be on disk. The
// transaction's commit is the point at which the objects become visible;
// if it fails, call Abort.
func (w *Writer) Commit(idx IndexWriter, replace bool) ([]PackInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil || w.err != nil {
		return nil, errors.New("cas: Commit before a successful Flush")
	}
	// A reference to a pack that is gone (the store was cleared, or a
	// sweep took it) must never be committed.
	for _, p := range w.finished {
		name := PackInfo{Name: p.name}.FileName()
		if _, err := os.Lstat(filepath.Join(w.dir, name)); err != nil {
			return nil, fmt.Errorf("cas: pack %s vanished before its commit (was the store cleared?); try again: %w", name, err)
		}
	}
	var infos []PackInfo
	for _, p := range w.finished {
		info, err := idx.AddPack(p.name, p.size)
		if err != nil {
			return nil, err
		}
		for _, e := range p.entries {
			if err := idx.PutObject(Location{Pack: info.Number, PackEntry: e}, replace); err != nil {
				return nil, err
			}
		}
		infos = append(infos, info)
	}
	w.committed = true
	return infos, nil
}

// Abort removes the Writer's pack files. Call it when the objects will not
// be committed (an error, or a failed transaction). It must not be called
// after a successful transaction commit.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur != nil {
		w.cur.file.Close()
		w.fs.Remove(w.cur.temp)
		w.cur = nil
	}
	for _, p := range w.finished {
		w.fs.Remove(filepath.Join(w.dir, PackInfo{Name: p.name}.FileName()))
	}
	w.finished = nil
	if w.err == nil {
		w.err = errors.New("cas: writer aborted")
	}
}

// SyncDir fsyncs a directory so that renames and creations in it are durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
