package packstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/casckpt/casckpt/cas"
)

// TempPrefix starts the names of packs still being written.
const TempPrefix = ".tmp-"

// DamagedSuffix ends the name of a pack set aside.
const DamagedSuffix = ".damaged"

// Local is a cas.PackStore in one directory of the local file system. It is
// safe for concurrent use.
type Local struct {
	dir string
	fs  FS
}

var _ cas.PackStore = (*Local)(nil)

// NewLocal returns the pack store in directory dir, which it writes through
// fsys (nil means OS). It creates nothing.
func NewLocal(dir string, fsys FS) *Local {
	if fsys == nil {
		fsys = OS
	}
	return &Local{dir: dir, fs: fsys}
}

// path returns where pack name lives, or an error if name is not a pack name.
func (l *Local) path(op, name string) (string, error) {
	if _, ok := cas.PackName(name); !ok {
		return "", fmt.Errorf("pack store: %s %q: not a pack name", op, name)
	}
	return filepath.Join(l.dir, name), nil
}

// Create starts pack name as a temporary file in the directory, named
// after the pack and created exclusively: while a writer of the name is at
// work, in this process or another, a second one is refused.
func (l *Local) Create(ctx context.Context, name string) (cas.PackWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	final, err := l.path("create", name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(final); err == nil {
		return nil, &fs.PathError{Op: "create", Path: final, Err: fs.ErrExist}
	}
	temp := filepath.Join(l.dir, TempPrefix+strings.TrimSuffix(name, cas.PackSuffix))
	f, err := l.fs.Create(temp)
	if err != nil {
		return nil, err
	}
	return &localWriter{l: l, final: final, temp: temp, f: f}, nil
}

// localWriter writes a temporary pack file and renames it on Close.
type localWriter struct {
	l           *Local
	final, temp string
	f           File
	ended       bool
}

func (w *localWriter) Write(b []byte) (int, error) {
	if w.ended {
		return 0, errEnded
	}
	return w.f.Write(b)
}

// Close fsyncs and closes the temporary file and renames it to the pack's
// name, unless a pack of that name appeared meanwhile. On an error it
// removes the temporary file.
func (w *localWriter) Close() error {
	if w.ended {
		return errEnded
	}
	w.ended = true
	err := w.f.Sync()
	closed := false
	if err == nil {
		err, closed = w.f.Close(), true
	}
	if err == nil {
		if _, serr := os.Lstat(w.final); serr == nil {
			err = &fs.PathError{Op: "rename", Path: w.final, Err: fs.ErrExist}
		}
	}
	if err == nil {
		err = w.l.fs.Rename(w.temp, w.final)
	}
	if err != nil {
		if !closed {
			w.f.Close()
		}
		w.l.fs.Remove(w.temp)
		return err
	}
	return nil
}

// Abort closes and removes the temporary file.
func (w *localWriter) Abort() error {
	if w.ended {
		return nil
	}
	w.ended = true
	w.f.Close()
	if err := w.l.fs.Remove(w.temp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sync fsyncs the directory, making the renames and removals in it durable.
func (l *Local) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.fs.SyncDir(l.dir)
}

// Open opens the pack file.
func (l *Local) Open(ctx context.Context, name string) (cas.PackReader, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := l.path("open", name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return localReader{f: f, size: st.Size()}, nil
}

type localReader struct {
	f    *os.File
	size int64
}

func (r localReader) ReadAt(b []byte, off int64) (int, error) { return r.f.ReadAt(b, off) }
func (r localReader) Size() int64                             { return r.size }
func (r localReader) Close() error                            { return r.f.Close() }

// Stat stats the pack file.
func (l *Local) Stat(ctx context.Context, name string) (cas.StoredPack, error) {
	if err := ctx.Err(); err != nil {
		return cas.StoredPack{}, err
	}
	p, err := l.path("stat", name)
	if err != nil {
		return cas.StoredPack{}, err
	}
	info, err := os.Stat(p)
	if err != nil {
		return cas.StoredPack{}, err
	}
	return cas.StoredPack{Name: name, Size: info.Size()}, nil
}

// List reads the directory and lists the files named as packs, in name
// order; temporary packs, packs set aside and other files are left out.
func (l *Local) List(ctx context.Context, fn func(cas.StoredPack) error) error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, ok := cas.PackName(e.Name()); !ok {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return err
		}
		if err := fn(cas.StoredPack{Name: e.Name(), Size: info.Size()}); err != nil {
			return err
		}
	}
	return nil
}

// Remove removes the pack file.
func (l *Local) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := l.path("remove", name)
	if err != nil {
		return err
	}
	return l.fs.Remove(p)
}

// SetAside renames the pack file to end in DamagedSuffix (replacing a file
// of that name).
func (l *Local) SetAside(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := l.path("set aside", name)
	if err != nil {
		return err
	}
	return l.fs.Rename(p, p+DamagedSuffix)
}

// RemoveIncomplete removes every temporary pack file in the directory. It
// goes on past a failed removal and returns the first error.
func (l *Local) RemoveIncomplete(ctx context.Context) (int64, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return 0, err
	}
	var freed int64
	var first error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return freed, err
		}
		if !strings.HasPrefix(e.Name(), TempPrefix) {
			continue
		}
		info, err := e.Info()
		if err == nil {
			err = l.fs.Remove(filepath.Join(l.dir, e.Name()))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if first == nil {
				first = err
			}
			continue
		}
		if info != nil {
			freed += info.Size()
		}
	}
	return freed, first
}
