package restorer

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/casckpt/casckpt/manifest"
)

// memFS is an FS in memory that logs every operation, for tests of Apply
// without a disk. fail, if set, is asked before each operation (given its
// log line) and its error returned instead.
type memFS struct {
	mu    sync.Mutex
	nodes map[string]*memNode // by slash path; "." is the root
	log   []string            // "op name" (and " name2" for renames)
	fail  func(line string) error
}

// memNode is a file, link or directory of a memFS.
type memNode struct {
	item
	perm   fs.FileMode
	synced bool // a file: synced since its last write
}

var _ FS = (*memFS)(nil)

// newMemFS returns a memFS holding s.
func newMemFS(s spec) *memFS {
	m := &memFS{nodes: map[string]*memNode{".": {item: item{Dir: true}}}}
	for p, it := range withDirs(s) {
		m.nodes[p] = &memNode{item: it, synced: true}
	}
	return m
}

// spec returns the tree m holds.
func (m *memFS) spec() spec {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := spec{}
	for p, n := range m.nodes {
		if p != "." {
			out[p] = n.item
		}
	}
	return out
}

// logged returns the operations logged so far.
func (m *memFS) logged() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.log...)
}

// do logs op on name and returns the injected failure, if any. It is
// called with m.mu held.
func (m *memFS) do(op, name string, more ...string) error {
	line := strings.Join(append([]string{op, name}, more...), " ")
	if m.fail != nil {
		if err := m.fail(line); err != nil {
			return &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	m.log = append(m.log, line)
	return nil
}

// parentOK fails unless the directory holding p exists.
func (m *memFS) parentOK(op, p string) error {
	if n := m.nodes[path.Dir(p)]; n == nil || !n.Dir {
		return &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	return nil
}

func (m *memFS) CreateTemp(dir string, perm fs.FileMode) (File, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := filepath.Join(dir, manifest.TempName())
	p := filepath.ToSlash(name)
	if err := m.do("createtemp", p); err != nil {
		return nil, "", err
	}
	if err := m.parentOK("createtemp", p); err != nil {
		return nil, "", err
	}
	n := &memNode{item: item{Exec: perm&0o100 != 0}, perm: perm}
	m.nodes[p] = n
	return &memFile{m: m, n: n, name: p}, name, nil
}

func (m *memFS) Open(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(name)
	if err := m.do("open", p); err != nil {
		return nil, err
	}
	n := m.nodes[p]
	if n == nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return &memFile{m: m, n: n, name: p}, nil
}

func (m *memFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(name)
	if err := m.do("remove", p); err != nil {
		return err
	}
	n := m.nodes[p]
	if n == nil {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	}
	if n.Dir {
		for q := range m.nodes {
			if strings.HasPrefix(q, p+"/") {
				return &fs.PathError{Op: "remove", Path: p, Err: syscall.ENOTEMPTY}
			}
		}
	}
	delete(m.nodes, p)
	return nil
}

func (m *memFS) Mkdir(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(name)
	if err := m.do("mkdir", p); err != nil {
		return err
	}
	if err := m.parentOK("mkdir", p); err != nil {
		return err
	}
	if m.nodes[p] != nil {
		return &fs.PathError{Op: "mkdir", Path: p, Err: fs.ErrExist}
	}
	m.nodes[p] = &memNode{item: item{Dir: true}, perm: perm}
	return nil
}

func (m *memFS) Symlink(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(newname)
	if err := m.do("symlink", p); err != nil {
		return err
	}
	if err := m.parentOK("symlink", p); err != nil {
		return err
	}
	if m.nodes[p] != nil {
		return &fs.PathError{Op: "symlink", Path: p, Err: fs.ErrExist}
	}
	m.nodes[p] = &memNode{item: item{Link: oldname}}
	return nil
}

func (m *memFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, b := filepath.ToSlash(oldname), filepath.ToSlash(newname)
	n := m.nodes[a]
	synced := "unsynced"
	if n != nil && (n.synced || n.Link != "") {
		synced = "synced"
	}
	if err := m.do("rename", a, b, synced); err != nil {
		return err
	}
	if n == nil {
		return &fs.PathError{Op: "rename", Path: a, Err: fs.ErrNotExist}
	}
	if err := m.parentOK("rename", b); err != nil {
		return err
	}
	if old := m.nodes[b]; old != nil && old.Dir {
		return &fs.PathError{Op: "rename", Path: b, Err: syscall.EISDIR}
	}
	delete(m.nodes, a)
	m.nodes[b] = n
	return nil
}

func (m *memFS) Lstat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(name)
	if err := m.do("lstat", p); err != nil {
		return nil, err
	}
	n := m.nodes[p]
	if n == nil {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	return memInfo{name: path.Base(p), n: *n}, nil
}

func (m *memFS) Readlink(name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := filepath.ToSlash(name)
	if err := m.do("readlink", p); err != nil {
		return "", err
	}
	n := m.nodes[p]
	if n == nil || n.Link == "" {
		return "", &fs.PathError{Op: "readlink", Path: p, Err: fs.ErrNotExist}
	}
	return n.Link, nil
}

// memInfo is what Lstat tells of a memNode: its content is its Sys.
type memInfo struct {
	name string
	n    memNode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return int64(len(i.n.Data)) }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.n.Dir }
func (i memInfo) Sys() any           { return i.n.Data }
func (i memInfo) Mode() fs.FileMode {
	switch {
	case i.n.Dir:
		return fs.ModeDir | 0o777
	case i.n.Link != "":
		return fs.ModeSymlink | 0o777
	}
	return i.n.perm
}

// memFile is an open file or directory of a memFS.
type memFile struct {
	m    *memFS
	n    *memNode
	name string
}

func (f *memFile) Write(b []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.m.do("write", f.name); err != nil {
		return 0, err
	}
	if f.n.Dir {
		return 0, fmt.Errorf("write %s: a directory", f.name)
	}
	f.n.Data += string(b)
	f.n.synced = false
	return len(b), nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	op := "sync"
	if f.n.Dir {
		op = "syncdir"
	}
	if err := f.m.do(op, f.name); err != nil {
		return err
	}
	f.n.synced = true
	return nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return f.m.do("close", f.name)
}
