package scan

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/manifest"
)

// walkDir lists directory n (at n.dir.rel) and its subdirectories, in parallel
// where the semaphore allows.
func (s *scanner) walkDir(n *node, ign *ignoreFile, wg *sync.WaitGroup) {
	if s.ctx.Err() != nil {
		return
	}
	rel := n.dir.rel
	dh, entries, ok := s.listDir(n)
	if !ok {
		return
	}
	ign = s.ignoreRules(rel, dh, entries, ign)
	// The children live in one slice, allocated once; its capacity is the
	// listing's length, so appending never moves the nodes already pointed
	// to.
	nodes := make([]node, 0, len(entries))
	d := n.dir
	d.children = make([]*node, 0, len(entries))
	var subdirs []*node
	for _, e := range entries {
		st, captured, ok := s.included(dh, d, e, ign)
		if !ok {
			continue
		}
		nodes = append(nodes, node{name: e.name, captured: captured})
		child := &nodes[len(nodes)-1]
		if !s.describe(child, dh, d, &st) {
			nodes = nodes[:len(nodes)-1]
			continue
		}
		if child.kind == manifest.KindDir {
			subdirs = append(subdirs, child)
		} else if s.files.Add(1) > s.walkLimit() {
			s.fail(fmt.Errorf("%w: more than %d files under %s (raise --max-files or add a .gitignore)", ErrTooManyFiles, s.opts.MaxFiles, s.root))
			dh.close()
			return
		}
		d.children = append(d.children, child)
	}
	dh.close() // not held open while the subdirectories are walked
	d.names = namesHash(d.children)
	s.walkSubdirs(subdirs, ign, wg)
}

// listDir opens directory n (at n.dir.rel) beneath the root and lists it, sorted
// by name. When it cannot, it fails the scan for the root, or warns and
// marks n not captured for a subdirectory, and ok is false; otherwise the
// caller closes dh.
func (s *scanner) listDir(n *node) (dh dir, entries []dirEntry, ok bool) {
	rel := n.dir.rel
	if testHook != nil {
		testHook("opendir", rel)
	}
	dh, err := s.top.openDir(rel)
	if err != nil {
		if rel == "" {
			s.fail(fmt.Errorf("open %s: %w", s.root, err))
			return dh, nil, false
		}
		s.warn("%s: cannot open directory: %v", rel, err)
		n.kind = manifest.KindUnreadable // not captured; buildTree reports it
		if errors.Is(err, fs.ErrNotExist) {
			n.kind = 0 // gone since it was listed
		}
		return dh, nil, false
	}
	entries, err = dh.list()
	if err != nil {
		dh.close()
		if rel == "" {
			s.fail(fmt.Errorf("read %s: %w", s.root, err))
			return dh, nil, false
		}
		s.warn("%s: cannot read directory: %v", rel, err)
		n.kind = manifest.KindUnreadable
		return dh, nil, false
	}
	return dh, entries, true
}

// ignoreRules returns the ignore rules that apply inside the directory at
// rel (open as dh, listing entries): ign, plus its own .gitignore if it
// has one.
func (s *scanner) ignoreRules(rel string, dh dir, entries []dirEntry, ign *ignoreFile) *ignoreFile {
	if _, found := slices.BinarySearchFunc(entries, ".gitignore", func(e dirEntry, name string) int { return strings.Compare(e.name, name) }); found {
		if content, err := readSmall(dh, ".gitignore"); err == nil {
			ign = parseIgnore(ign, rel, content)
		} else {
			s.warn("%s: cannot read: %v", join(rel, ".gitignore"), err)
		}
	}
	return ign
}

// describe fills child, an included entry of directory d (open
// as dh), from its metadata st. It returns false, reporting the entry
// excluded, for a file over the size limit (unless Options.Capture
// captures it) and a socket, FIFO or device, which is never opened. An
// entry that could not be stat'ed (st.Mode 0) and a link that cannot be
// read are kept as unreadable.
func (s *scanner) describe(child *node, dh dir, d *dirNode, st *osfs.Stat) bool {
	rel := d.rel
	switch st.Type() {
	case 0: // not stat'ed
		child.kind = manifest.KindUnreadable
	case osfs.TypeDir:
		child.kind = manifest.KindDir
		child.dir = &dirNode{rel: join(rel, child.name), captured: child.captured}
	case osfs.TypeRegular:
		if st.Size > s.opts.MaxFileSize && !child.captured {
			if child.captured = s.captures(join(rel, child.name), false); !child.captured {
				s.exclude(join(rel, child.name))
				return false
			}
		}
		child.kind = manifest.KindFile
		child.exec = st.Exec()
		child.size = st.Size
		s.bytes.Add(st.Size)
		child.stamp = statcache.CurrentStamp(st.Size, st.Mtime, st.Ctime, st.Ino, st.Mode)
		child.dev, child.ino = st.Dev, st.Ino
	case osfs.TypeSymlink:
		target, err := dh.readlink(child.name)
		if err != nil || target == "" || strings.IndexByte(target, 0) >= 0 || len(target) > manifest.MaxTargetLen {
			s.warn("%s: cannot read link: %v", join(rel, child.name), err)
			if errors.Is(err, fs.ErrNotExist) { // gone since it was listed
				s.exclude(join(rel, child.name))
				return false
			}
			child.kind = manifest.KindUnreadable
			return true
		}
		child.kind = manifest.KindSymlink
		if d.links == nil {
			d.links = map[string]string{}
		}
		d.links[child.name] = target
		child.size = int64(len(target))
		child.stamp = statcache.LinkStamp(target)
	default: // sockets, FIFOs, devices: never opened, never captured
		s.exclude(join(rel, child.name))
		return false
	}
	return true
}

// walkers bounds the goroutines listing directories: four a core, as a
// listing waits on its system calls and holds little memory (unlike the
// readers: see maxReaders).
func walkers() int { return 4 * runtime.GOMAXPROCS(0) }

// maxReaders caps how many files a scan reads at once. A reader holds a
// chunking buffer (512 KiB) and a small file's bytes, not a block: the
// store's Writer bounds its blocks in memory by the blocks it compresses
// at once, however many readers fill them. Reading, hashing and chunking
// take about half of a first snapshot's CPU, so readers beyond the
// compressors keep them busy: on a quiet machine taskset to 8 cores, W1
// with 8 readers and 4 compressions took 0.425 s against 0.606 s with 4
// readers (BENCHMARKS.md, "W1 on 16 cores, measured").
const maxReaders = 16

// readers is how many files a scan reads at once: one a core, at most
// maxReaders.
func readers() int { return min(runtime.GOMAXPROCS(0), maxReaders) }

// walkSubdirs walks the directories subdirs: each in a new goroutine
// while the semaphore has room, otherwise on this one.
func (s *scanner) walkSubdirs(subdirs []*node, ign *ignoreFile, wg *sync.WaitGroup) {
	for _, sub := range subdirs {
		select {
		case s.sem <- struct{}{}:
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-s.sem }()
				s.walkDir(sub, ign, wg)
			}()
		default:
			s.walkDir(sub, ign, wg)
		}
	}
}

// readSmall reads a small regular file (a .gitignore) of the directory dh.
func readSmall(dh dir, name string) ([]byte, error) {
	f, err := dh.openEntry(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > 1<<20 {
		return nil, errors.New("not a regular file of at most 1 MiB")
	}
	return io.ReadAll(f)
}

// namesHash is the NamesHasher sum of children: computed by the walk, on
// its goroutines, and compared with the stat cache's record after it.
func namesHash(children []*node) uint64 {
	h := namesHashers.Get().(*statcache.NamesHasher)
	defer namesHashers.Put(h)
	h.Reset()
	for _, c := range children {
		h.Add(c.name, uint8(c.kind))
	}
	return h.Sum()
}

// namesHashers keep their buffers from one directory to the next.
var namesHashers = sync.Pool{New: func() any { return new(statcache.NamesHasher) }}
