package gitimport

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

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

// maxWholeObject bounds the objects read whole: commits, tags and trees.
// A tree of 50,000 entries (the most a snapshot holds) takes about 3 MiB.
const maxWholeObject = 32 << 20

// readVerified reads object h of type t whole, if it holds at most limit
// bytes (else errObjectTooLarge, without reading it), and checks that its
// content hashes to h; go-git does not check loose or packed objects as it
// reads them.
func readVerified(st storer.EncodedObjectStorer, t plumbing.ObjectType, h plumbing.Hash, limit int64) (plumbing.EncodedObject, error) {
	size, err := objectSize(st, t, h)
	if err != nil {
		return nil, err
	}
	if size > limit {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", errObjectTooLarge, size, limit)
	}
	obj, err := st.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	rc, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	v := newVerifier(obj, h, rc)
	if _, err := io.Copy(io.Discard, v); err != nil {
		return nil, err
	}
	if err := v.check(); err != nil {
		return nil, err
	}
	return obj, nil
}

// verifier hashes an object's content as it is read; check tells whether
// it all was read and matched.
type verifier struct {
	r      io.Reader
	hasher plumbing.Hasher
	want   plumbing.Hash
	size   int64
	n      int64
}

func newVerifier(obj plumbing.EncodedObject, want plumbing.Hash, r io.Reader) *verifier {
	return &verifier{r: r, hasher: plumbing.NewHasher(obj.Type(), obj.Size()), want: want, size: obj.Size()}
}

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.n += int64(n)
	_, _ = v.hasher.Write(p[:n]) // a hash never fails to write
	return n, err
}

// check reports a short read or a content that does not hash to the
// object's name.
func (v *verifier) check() error {
	if v.n != v.size {
		return fmt.Errorf("read %d bytes of %d", v.n, v.size)
	}
	if got := v.hasher.Sum(); got != v.want {
		return fmt.Errorf("%w (it hashes to %s)", errHashMismatch, got)
	}
	return nil
}
