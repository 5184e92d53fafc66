package manifest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/casckpt/casckpt/cas"
)

// ErrNotExist is wrapped when a path is not in a tree.
var ErrNotExist = fs.ErrNotExist

// Walk calls fn for every entry below tree root, depth first, parents before
// their children and siblings in name order. Paths are slash-separated and
// relative to the root. If fn returns fs.SkipDir for a directory, its
// contents are skipped; any other error stops the walk and is returned.
func Walk(ctx context.Context, g cas.Getter, root cas.ID, fn func(p string, e Entry) error) error {
	err := walk(ctx, g, root, "", fn)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

func walk(ctx context.Context, g cas.Getter, id cas.ID, dir string, fn func(string, Entry) error) error {
	t, err := Load(ctx, g, id)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		p := path.Join(dir, e.Name)
		err := fn(p, e)
		if e.Kind == KindDir {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			if err == nil {
				err = walk(ctx, g, e.Tree, p, fn)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Lookup returns the entry at slash-separated path p below root. The empty
// path and "." name the root directory itself.
func Lookup(ctx context.Context, g cas.Getter, root cas.ID, p string) (Entry, error) {
	e := Entry{Kind: KindDir, Tree: root}
	p = strings.Trim(path.Clean("/"+p), "/")
	if p == "" {
		return e, nil
	}
	for _, name := range strings.Split(p, "/") {
		if e.Kind != KindDir {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
		t, err := Load(ctx, g, e.Tree)
		if err != nil {
			return Entry{}, err
		}
		var ok bool
		if e, ok = t.Lookup(name); !ok {
			return Entry{}, fmt.Errorf("%s: %w", p, ErrNotExist)
		}
	}
	return e, nil
}

// FileReader streams a file entry's content chunk by chunk, each verified.
type FileReader struct {
	ctx    context.Context
	g      cas.Getter
	chunks []cas.ID
	buf    []byte
}

// NewFileReader returns a reader of file entry e's bytes.
func NewFileReader(ctx context.Context, g cas.Getter, e Entry) *FileReader {
	return &FileReader{ctx: ctx, g: g, chunks: e.Chunks}
}

// Read implements io.Reader.
func (r *FileReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if len(r.chunks) == 0 {
			return 0, io.EOF
		}
		b, err := r.g.Get(r.ctx, r.chunks[0])
		if err != nil {
			return 0, err
		}
		r.buf, r.chunks = b, r.chunks[1:]
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// ReadFile returns the whole content of file entry e.
func ReadFile(ctx context.Context, g cas.Getter, e Entry) ([]byte, error) {
	out := make([]byte, 0, e.Size)
	for _, c := range e.Chunks {
		b, err := g.Get(ctx, c)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if int64(len(out)) != e.Size {
		return nil, fmt.Errorf("%w: %q has %d bytes, its entry says %d", cas.ErrCorrupt, e.Name, len(out), e.Size)
	}
	return out, nil
}
