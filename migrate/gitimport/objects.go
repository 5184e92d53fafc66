package gitimport

import (
	"bufio"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// maxWholeObject bounds the objects read whole: commits, tags and trees.
// A tree of 50,000 entries (the most a snapshot holds) takes about 3 MiB.
const maxWholeObject = 32 << 20

// objectReader reads the objects of one repository, each checked against
// its name and never inflated past the size its header declares. It reads
// loose objects itself (go-git inflates a loose object whole before anyone
// can check its size: a zlib bomb of a few hundred KiB can declare 10
// bytes and inflate to gigabytes), from the repository's objects
// directory, then from those its objects/info/alternates names by
// absolute path. Packed objects are read through go-git, once their
// streams are checked (see checkPacked).
type objectReader struct {
	st storer.EncodedObjectStorer
	// loose are the objects directories, each confined by os.Root (a
	// symbolic link cannot lead out of it); a missing one is left out.
	loose []*os.Root
	// packs are the pack files of those directories, opened on the first
	// packed object (see checkPacked).
	packs       []*pack
	packsLoaded bool
}

// withObjects opens the repository at gitDir read-only for fn (see
// withRepo), with a reader of its objects.
func withObjects(gitDir string, fn func(o *objectReader) error) error {
	return withRepo(gitDir, func(st *filesystem.Storage) error {
		o := newObjectReader(gitDir, st)
		defer o.close()
		return fn(o)
	})
}

func newObjectReader(gitDir string, st storer.EncodedObjectStorer) *objectReader {
	o := &objectReader{st: st}
	objects := filepath.Join(gitDir, "objects")
	dirs := []string{objects}
	if b, err := os.ReadFile(filepath.Join(objects, "info", "alternates")); err == nil {
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if filepath.IsAbs(line) {
				dirs = append(dirs, line)
			}
		}
	}
	for _, d := range dirs {
		if r, err := os.OpenRoot(d); err == nil {
			o.loose = append(o.loose, r)
		}
	}
	return o
}

func (o *objectReader) close() {
	for _, r := range o.loose {
		_ = r.Close() // opened for reading only
	}
	for _, p := range o.packs {
		_ = p.file.Close()
	}
}

// open opens object h, if it is of type t (plumbing.AnyObject: any type)
// and holds at most limit bytes; else it fails, with errObjectTooLarge for
// a larger object, without inflating its content. The reader yields
// exactly the object's content and fails at its end unless the content
// ends there and hashes to h.
func (o *objectReader) open(t plumbing.ObjectType, h plumbing.Hash, limit int64) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	typ, size, rc, err := o.openLoose(h)
	if errors.Is(err, fs.ErrNotExist) {
		typ, size, rc, err = o.openPacked(t, h, limit)
	}
	if err != nil {
		return 0, 0, nil, err
	}
	switch {
	case t != plumbing.AnyObject && typ != t:
		err = fmt.Errorf("is a %s, not a %s", typ, t)
	case size > limit:
		err = fmt.Errorf("%w: %d bytes, more than %d", errObjectTooLarge, size, limit)
	}
	if err != nil {
		_ = rc.Close()
		return 0, 0, nil, err
	}
	return typ, size, &checkedReader{rc: rc, hasher: plumbing.NewHasher(typ, size), want: h, size: size, left: size}, nil
}

// read reads object h of type t whole (see open).
func (o *objectReader) read(t plumbing.ObjectType, h plumbing.Hash, limit int64) (plumbing.EncodedObject, error) {
	typ, size, rc, err := o.open(t, h, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	obj := &plumbing.MemoryObject{}
	obj.SetType(typ)
	b := make([]byte, size)
	if _, err := io.ReadFull(rc, b); err != nil {
		return nil, err
	}
	if _, err := rc.Read(nil); !errors.Is(err, io.EOF) {
		return nil, err
	}
	_, _ = obj.Write(b) // a memory object never fails to write
	return obj, nil
}

// maxHeader bounds a loose object's header: "commit " and 19 digits.
const maxHeader = 32

var zlibReaders sync.Pool // of io.ReadCloser implementing zlib.Resetter

// inflate returns a zlib reader of r, from the pool; release gives it back.
func inflate(r io.Reader) (io.ReadCloser, error) {
	if z, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := z.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
		return z, nil
	}
	return zlib.NewReader(r)
}

// release gives a reader from inflate back to the pool.
func release(zr io.ReadCloser) { zlibReaders.Put(zr) }

// pooled is a reader from inflate that goes back to the pool when closed.
type pooled struct{ io.ReadCloser }

func (p pooled) Close() error {
	release(p.ReadCloser)
	return nil
}

// openLoose opens loose object h (fs.ErrNotExist if there is none): its
// type and declared size, and a reader of its content, not yet bounded.
func (o *objectReader) openLoose(h plumbing.Hash) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	name := h.String()
	var f *os.File
	err := error(fs.ErrNotExist)
	for _, r := range o.loose {
		if f, err = r.Open(name[:2] + "/" + name[2:]); !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return 0, 0, nil, err
	}
	zr, err := inflate(bufio.NewReaderSize(f, 4096))
	if err != nil {
		_ = f.Close()
		return 0, 0, nil, fmt.Errorf("loose object: %w", err)
	}
	rc := &looseFile{Reader: zr, f: f, zr: zr}
	typ, size, err := readHeader(zr)
	if err != nil {
		_ = rc.Close()
		return 0, 0, nil, err
	}
	return typ, size, rc, nil
}

// readHeader reads a loose object's header, "<type> <size>\x00", reading
// at most maxHeader bytes.
func readHeader(r io.Reader) (plumbing.ObjectType, int64, error) {
	var buf [maxHeader]byte
	for i := range buf {
		if _, err := io.ReadFull(r, buf[i:i+1]); err != nil {
			return 0, 0, fmt.Errorf("loose object header: %w", err)
		}
		if buf[i] != 0 {
			continue
		}
		typName, sizeText, ok := strings.Cut(string(buf[:i]), " ")
		typ, err := plumbing.ParseObjectType(typName)
		size, serr := strconv.ParseInt(sizeText, 10, 64)
		if !ok || err != nil || typ == plumbing.OFSDeltaObject || typ == plumbing.REFDeltaObject ||
			serr != nil || size < 0 || sizeText[0] == '+' {
			return 0, 0, fmt.Errorf("loose object header %q is not git's", buf[:i])
		}
		return typ, size, nil
	}
	return 0, 0, fmt.Errorf("loose object header longer than %d bytes", maxHeader)
}

// looseFile is a loose object's inflated stream; closing it closes the
// file and gives the inflater back.
type looseFile struct {
	io.Reader
	f  *os.File
	zr io.ReadCloser
}

func (l *looseFile) Close() error {
	release(l.zr)
	return l.f.Close()
}

// openPacked opens packed object h (see openPackedDirect), or else asks
// go-git, which also finds the objects of alternates' pack files: the size
// first, and the content only if it is within limit.
func (o *objectReader) openPacked(t plumbing.ObjectType, h plumbing.Hash, limit int64) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	typ, size, rc, err := o.openPackedDirect(t, h, limit)
	if !errors.Is(err, fs.ErrNotExist) {
		return typ, size, rc, err
	}
	size, err = objectSize(o.st, t, h)
	if err != nil {
		return 0, 0, nil, err
	}
	if size > limit {
		return 0, 0, nil, fmt.Errorf("%w: %d bytes, more than %d", errObjectTooLarge, size, limit)
	}
	obj, err := o.st.EncodedObject(t, h)
	if err != nil {
		return 0, 0, nil, err
	}
	if obj.Size() != size {
		return 0, 0, nil, fmt.Errorf("its header says %d bytes, its content %d", size, obj.Size())
	}
	rc, err = obj.Reader()
	if err != nil {
		return 0, 0, nil, err
	}
	return obj.Type(), size, rc, nil
}

// sizer is implemented by go-git's file system storage: an object's size
// from its header, without inflating it.
type sizer interface {
	EncodedObjectSize(h plumbing.Hash) (int64, error)
}

// objectSize returns the size of object h without reading its content
// where the storage allows (it always does for a file system store).
func objectSize(st storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash) (int64, error) {
	if s, ok := st.(sizer); ok {
		return s.EncodedObjectSize(h)
	}
	obj, err := st.EncodedObject(t, h)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

// checkedReader reads exactly an object's declared size from rc, hashing
// it. At the end it reads one byte more: a stream longer than declared,
// shorter, or whose content does not hash to the object's name is an
// error instead of io.EOF.
type checkedReader struct {
	rc         io.ReadCloser
	hasher     plumbing.Hasher
	want       plumbing.Hash
	size, left int64
	err        error
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.left == 0 {
		c.err = c.finish()
		return 0, c.err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	_, _ = c.hasher.Write(p[:n]) // a hash never fails to write
	switch {
	case errors.Is(err, io.EOF) && c.left > 0:
		err = fmt.Errorf("content ends after %d of the %d bytes its header declares", c.size-c.left, c.size)
	case errors.Is(err, io.EOF):
		err = nil
	}
	c.err = err
	return n, err
}

// finish checks, once the declared size is read, that the stream ends
// there (which also checks zlib's checksum) and that the content hashes
// to the object's name.
func (c *checkedReader) finish() error {
	var one [1]byte
	n, err := io.ReadFull(c.rc, one[:])
	switch {
	case n > 0:
		return fmt.Errorf("content is longer than the %d bytes its header declares", c.size)
	case !errors.Is(err, io.EOF):
		return err
	}
	if got := c.hasher.Sum(); got != c.want {
		return fmt.Errorf("%w (it hashes to %s)", errHashMismatch, got)
	}
	return io.EOF
}

func (c *checkedReader) Close() error { return c.rc.Close() }
