package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/gitindex"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/manifest"
)

// Defaults of Options.
const (
	DefaultMaxFileSize = 10 << 20
	DefaultMaxFiles    = 50_000
)

// Options tune a scan. The zero value means the defaults.
type Options struct {
	MaxFileSize int64 // files larger than this, at the walk or while read, are excluded (default 10 MiB)
	MaxFiles    int   // more files and links than this fail the scan (default 50,000)
	Workers     int   // parallel hashers (default GOMAXPROCS)
	// Skip lists absolute paths never captured nor descended into: the
	// store's own directory, when it lies inside the tree.
	Skip []string
	// Cache is the project's stat cache by directory, and Trees reads the
	// trees it names. Without both every file is read.
	Cache map[string]statcache.Dir
	Trees Trees
	// Progress, if set, is called after each file is hashed, from any
	// goroutine, with the running totals.
	Progress func(filesHashed, bytesHashed int64)
	// Capture, if set, is asked, from any goroutine, about each entry
	// (rel: its slash path; dir: whether it is a directory) that an
	// exclusion rule, a .gitignore or the size limit leaves out, and about
	// each entry of a directory it captured: true captures it all the
	// same, whatever its size. The Skip list, leftovers, special files and
	// what cannot be read are never captured. A restore captures what it
	// will overwrite, so that its snapshot from before holds it.
	Capture func(rel string, dir bool) bool
}

// Trees reads stored trees and tells which objects are stored.
type Trees interface {
	cas.Getter
	Has(id cas.ID) (bool, error)
}

func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Trees == nil {
		o.Cache = nil
	}
	return o
}

// Result is what a scan found.
type Result struct {
	Root   cas.ID // the root tree
	Files  int64  // regular files and symlinks captured
	Bytes  int64  // their total size
	Hashed int64  // files read because the cache could not vouch for them
	// MaxFileSize is the limit the scan applied.
	MaxFileSize int64
	// CachePut and CacheRemove update the stat cache to this scan.
	CachePut    map[string]statcache.Dir
	CacheRemove []string
	// Excluded lists the entries present but not captured (excluded by a
	// rule or the size limit, unreadable, or special files), relative to the
	// root, outermost only: a restore must never touch them.
	Excluded []string
	// Unreadable lists the entries of Excluded that were there but could
	// not be read (a file, link or directory the user may not read, a read
	// error, a file that kept growing): the tree holds each as a
	// manifest.KindUnreadable entry, so that no diff, restore or undo
	// treats it as deleted.
	Unreadable []string
	// ExcludedByDefault counts the entries (outermost only) that the
	// default list alone excluded: no .gitignore line ignored them, none
	// negated them, and the project's git index tracks none of them.
	ExcludedByDefault int64
	// Warnings name files that could not be captured or were changing while
	// read.
	Warnings []string
	// Leftovers are temporary files of a restore that was interrupted.
	Leftovers []string
	top       *node // the tree as the scan saw it, for Stamp
}

// Stamp returns the stamp of the regular file at rel (a slash path) as
// the scan saw it, trusted: statcache.CurrentStamp of its metadata then.
// ok is false when the scan captured no regular file there.
func (r Result) Stamp(rel string) (stamp uint64, ok bool) {
	n := r.top
	for name := range strings.SplitSeq(rel, "/") {
		if n == nil || n.dir == nil {
			return 0, false
		}
		children := n.dir.children
		i, found := slices.BinarySearchFunc(children, name, func(c *node, name string) int { return strings.Compare(c.name, name) })
		if !found {
			return 0, false
		}
		n = children[i]
	}
	if n == nil || n.kind != manifest.KindFile {
		return 0, false
	}
	return n.stamp | 1, true // an untrusted stamp differs in its lowest bit only
}

// node is one entry the walk kept. A tree's nodes are all in memory
// between the walk and the trees' storing (11,000 for a tree the size of
// Go's source, 100,000 for a large monorepo), so what only a directory
// needs is in dirNode, and the flags sit together.
type node struct {
	name   string
	target string // a link's
	size   int64
	// stamp is a file's statcache.FileStamp when hashed, its cached stamp when
	// vouched for, or a link's statcache.LinkStamp.
	stamp uint64
	// dev and ino identify a file as the walk saw it: a read that opens
	// another file under its name reads again.
	dev, ino uint64
	lines    int64
	chunks   []cas.ID
	dir      *dirNode      // a directory's; nil for every other kind
	kind     manifest.Kind // 0: not captured after all
	exec     bool
	cached   bool // a file vouched for by the stat cache: chunks from dc.Tree
	binary   bool
	captured bool // excluded, but captured for Options.Capture: no size limit
}

// dirNode is what the walk and the stat cache tell of a directory.
type dirNode struct {
	rel      string  // its path relative to the root
	children []*node // the entries kept, sorted by name
	names    uint64  // the NamesHasher sum of the children as the walk saw them
	// The stat cache record; the cached tree, once read; and whether the
	// names and every non-directory entry are as it records.
	dc         *statcache.Dir
	cachedTree *manifest.Tree
	sameFiles  bool
	captured   bool   // excluded, but captured for Options.Capture: so is each entry kept
	tree       cas.ID // once built
}

type scanner struct {
	ctx       context.Context
	root      string
	top       root      // the root directory, opened by List and again by Store: every open is relative to it
	rootStat  osfs.Stat // the root as List opened it
	put       cas.Putter
	opts      Options
	start     int64 // ns, real clock: for racily-clean decisions
	files     atomic.Int64
	sem       chan struct{} // bounds parallel directory listing
	mu        sync.Mutex    // guards the fields below
	excluded  []string
	unread    []string
	byDefault atomic.Int64 // entries the default list alone excluded
	indexOnce sync.Once
	index     *gitindex.Tracked // the project's git index, once read (nil: none)
	warnings  []string
	leftovers []string
	toHash    []hashJob
	cacheHits int // directories with a stat cache record
	firstErr  error
	hashedN   atomic.Int64
	hashedB   atomic.Int64
}

// testHook, when set by a test, is called at points of the scan where
// another process could change the tree: "opendir" before a directory is
// opened, "open" before a file is opened, "read" after a file is opened and
// before it is read.
var testHook func(point, rel string)

// now is the clock for racily-clean decisions: the real one, whatever the
// store's clock says, since it is compared with file system timestamps.
// Tests move it (SetClock).
var now = time.Now

// SetClock makes the scans that start from now on take clock's time as
// the real time in their racily-clean decisions, and returns the function
// that puts the real clock back. It is for tests of the packages above
// scan, which cannot wait out RacyWindow to see a stat cache vouch for a
// file they just wrote; it must not be called while a scan is listing.
func SetClock(clock func() time.Time) (restore func()) {
	old := now
	now = clock
	return func() { now = old }
}

type hashJob struct {
	rel string
	n   *node
}

// Scan walks root and stores what a snapshot captures through put: List,
// then the Listing's Store.
func Scan(ctx context.Context, root string, put cas.Putter, opts Options) (Result, error) {
	l, err := List(ctx, root, opts)
	if err != nil {
		return Result{}, err
	}
	return l.Store(put, opts.Cache, opts.Trees, opts.Progress)
}

// Listing is a tree as the walk saw it: every entry a snapshot captures,
// stat'ed, none read yet. List needs no store, so a caller can list the
// tree while it waits for the store (a bucket's listings).
type Listing struct {
	s   *scanner
	top *node
}

// List walks root: it opens every directory beneath it and stats every
// entry, applying the exclusions. Of opts it uses MaxFileSize, MaxFiles,
// Skip and Workers; Store takes the rest.
func List(ctx context.Context, root string, opts Options) (*Listing, error) {
	opts.Cache, opts.Trees, opts.Progress = nil, nil, nil
	opts = opts.withDefaults()
	s := &scanner{
		ctx: ctx, root: root, opts: opts,
		start: now().UnixNano(),
		sem:   make(chan struct{}, opts.Workers*4),
	}
	top, st, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer top.close() // Store opens the root again
	s.top, s.rootStat = top, st
	tree := &node{kind: manifest.KindDir, dir: &dirNode{}}
	var wg sync.WaitGroup
	s.walkDir(tree, nil, &wg)
	wg.Wait()
	if s.firstErr != nil {
		return nil, s.firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Listing{s: s, top: tree}, nil
}

// Store reads the files of the listing that the stat cache (cache, whose
// trees trees reads; nil for none) cannot vouch for, stores what the
// snapshot needs through put, calling progress (if not nil) after each
// file read, and builds the trees. A Listing is stored once.
func (l *Listing) Store(put cas.Putter, cache map[string]statcache.Dir, trees Trees, progress func(filesHashed, bytesHashed int64)) (Result, error) {
	s, ctx := l.s, l.s.ctx
	s.put = put
	s.opts.Cache, s.opts.Trees, s.opts.Progress = cache, trees, progress
	s.opts = s.opts.withDefaults()
	top, st, err := openRoot(s.root)
	if err != nil {
		return Result{}, err
	}
	defer top.close()
	if st.Dev != s.rootStat.Dev || st.Ino != s.rootStat.Ino {
		return Result{}, fmt.Errorf("%s was replaced by another directory during the snapshot: run it again", s.root)
	}
	s.top = top
	s.matchAll(l.top)
	if err := s.hashAll(); err != nil {
		return Result{}, err
	}
	res := Result{CachePut: map[string]statcache.Dir{}}
	cached, err := s.buildTree(l.top, &res)
	id := l.top.dir.tree
	if err == nil && cached {
		err = s.checkCachedTree(id)
	}
	if errors.Is(err, errCacheDamaged) {
		// The stat cache names a tree the store lacks: it is damaged.
		// Scan again without it, reading every file.
		opts := s.opts
		opts.Cache = nil
		return Scan(ctx, s.root, put, opts)
	}
	if err != nil {
		return Result{}, err
	}
	res.Root = id
	res.Hashed = s.hashedN.Load()
	res.MaxFileSize = s.opts.MaxFileSize
	res.CacheRemove = s.cacheRemove(l.top)
	res.Excluded = s.excluded
	slices.Sort(res.Excluded)
	res.Unreadable = s.unread
	slices.Sort(res.Unreadable)
	res.ExcludedByDefault = s.byDefault.Load()
	res.Warnings = s.warnings
	slices.Sort(res.Warnings)
	res.Leftovers = s.leftovers
	res.top = l.top
	return res, nil
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

// matchAll attaches to directory n and to each directory below it its
// stat cache record, and decides which of their files the cache vouches
// for (matchCache).
func (s *scanner) matchAll(n *node) {
	d := n.dir
	if dc, ok := s.opts.Cache[d.rel]; ok {
		d.dc = &dc
		s.cacheHits++
	}
	s.matchCache(n)
	for _, c := range d.children {
		if c.kind == manifest.KindDir {
			s.matchAll(c)
		}
	}
}

// cacheRemove lists, sorted, the directories of the stat cache that are
// no longer in the tree below top.
func (s *scanner) cacheRemove(top *node) []string {
	if s.cacheHits == len(s.opts.Cache) {
		return nil // every record was matched to a directory
	}
	seen := map[string]bool{}
	var visit func(n *node)
	visit = func(n *node) {
		seen[n.dir.rel] = true
		for _, c := range n.dir.children {
			if c.kind == manifest.KindDir {
				visit(c)
			}
		}
	}
	visit(top)
	var gone []string
	for d := range s.opts.Cache {
		if !seen[d] {
			gone = append(gone, d)
		}
	}
	slices.Sort(gone)
	return gone
}

func (s *scanner) fail(err error) {
	s.mu.Lock()
	if s.firstErr == nil {
		s.firstErr = err
	}
	s.mu.Unlock()
}

func (s *scanner) warn(format string, args ...any) {
	s.mu.Lock()
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *scanner) exclude(rel string) {
	s.mu.Lock()
	s.excluded = append(s.excluded, rel)
	s.mu.Unlock()
}

// unreadable reports the entry at rel excluded because it could not be
// read.
func (s *scanner) unreadable(rel string) {
	s.mu.Lock()
	s.excluded = append(s.excluded, rel)
	s.unread = append(s.unread, rel)
	s.mu.Unlock()
}

func (s *scanner) abs(rel string) string {
	if rel == "" {
		return s.root
	}
	return filepath.Join(s.root, filepath.FromSlash(rel))
}

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
		if !s.describe(child, dh, rel, &st) {
			nodes = nodes[:len(nodes)-1]
			continue
		}
		if child.kind == manifest.KindDir {
			subdirs = append(subdirs, child)
		} else if s.files.Add(1) > int64(s.opts.MaxFiles) {
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

// included stats one entry e of directory d (open as dh) without
// following a link and tells whether the walk keeps it. An invalid name
// and one excluded by a rule, a .gitignore or the Skip list are reported
// as excluded; an entry that cannot be stat'ed is kept with st.Mode 0,
// for describe to record as unreadable; a killed
// restore's temporary file as a leftover; an entry vanished since the
// listing is passed over. An entry a rule excludes, or any entry of a
// captured directory, is kept and captured when Options.Capture says so.
// A directory is not stat'ed: st holds only its type. The entry's
// relative path is built only where it is needed, to keep the common case
// free of allocations.
func (s *scanner) included(dh dir, d *dirNode, e dirEntry, ign *ignoreFile) (st osfs.Stat, captured, ok bool) {
	name, rel := e.name, d.rel
	var err error
	if err = manifest.ValidName(name); err != nil {
		s.warn("%s: %v", join(rel, name), err)
		s.exclude(join(rel, name))
		return st, false, false
	}
	if e.dir {
		st.Mode = osfs.TypeDir // a directory needs no stat: nothing of it is recorded
	} else if st, err = dh.lstat(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) { // vanished since listing: not there
			return st, false, false
		}
		s.warn("%s: cannot stat: %v", join(rel, name), err)
		return osfs.Stat{}, false, true // not known: unreadable
	}
	isDir := st.Type() == osfs.TypeDir
	if st.Type() == osfs.TypeRegular && manifest.IsTemp(name) { // a killed restore's: reported, never captured
		s.mu.Lock()
		s.leftovers = append(s.leftovers, join(rel, name))
		s.mu.Unlock()
		return st, false, false
	}
	m := noMatch
	if ign != nil {
		m = ign.match(join(rel, name), isDir)
	}
	if name == ".git" || s.skipped(rel, name) {
		s.exclude(join(rel, name))
		return st, false, false
	}
	ruled := d.captured || m == ignored
	byDefault := !ruled && m != negated && defaults.excluded(name, isDir) && !s.tracked(join(rel, name), isDir)
	if (ruled || byDefault) && !s.captures(join(rel, name), isDir) {
		s.exclude(join(rel, name))
		if byDefault {
			s.byDefault.Add(1)
		}
		return st, false, false
	}
	return st, ruled || byDefault, true
}

// captures says whether Options.Capture captures the excluded entry rel.
func (s *scanner) captures(rel string, dir bool) bool {
	return s.opts.Capture != nil && s.opts.Capture(rel, dir)
}

// tracked reports whether the project's git index tracks rel (a file, or
// a file below the directory rel). The index is read once, on the first
// question: only a path the default list matches asks it. An index that
// cannot be read tracks nothing, with a warning.
func (s *scanner) tracked(rel string, isDir bool) bool {
	s.indexOnce.Do(func() {
		var err error
		if s.index, err = gitindex.Load(s.root); err != nil {
			s.warn("cannot read the git index (%v): the default excludes apply to every path", err)
		}
	})
	return s.index.Has(rel, isDir)
}

// skipped says whether the entry name of the directory at rel is on the
// Skip list, building its absolute path only when name is the base of a
// listed path (the common case, no match, allocates nothing).
func (s *scanner) skipped(rel, name string) bool {
	for _, p := range s.opts.Skip {
		if filepath.Base(p) == name && s.abs(join(rel, name)) == p {
			return true
		}
	}
	return false
}

// describe fills child, an included entry of the directory at rel (open
// as dh), from its metadata st. It returns false, reporting the entry
// excluded, for a file over the size limit (unless Options.Capture
// captures it) and a socket, FIFO or device, which is never opened. An
// entry that could not be stat'ed (st.Mode 0) and a link that cannot be
// read are kept as unreadable.
func (s *scanner) describe(child *node, dh dir, rel string, st *osfs.Stat) bool {
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
		child.target = target
		child.size = int64(len(target))
		child.stamp = statcache.LinkStamp(target)
	default: // sockets, FIFOs, devices: never opened, never captured
		s.exclude(join(rel, child.name))
		return false
	}
	return true
}

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

// matchCache decides which files of directory n the stat cache vouches for
// and queues the others for hashing. While the names hash matches, the
// record's stamps line up with the children by position; otherwise the
// cached tree is read for the names.
func (s *scanner) matchCache(n *node) {
	d := n.dir
	var stamps map[string]uint64 // by name, when the listing changed
	aligned := d.dc != nil && d.dc.Names == d.names && len(d.dc.Stamps) == len(d.children)
	if d.dc != nil && !aligned {
		if t, err := manifest.Load(s.ctx, s.opts.Trees, d.dc.Tree); err == nil && len(t.Entries) == len(d.dc.Stamps) {
			d.cachedTree = &t
			stamps = map[string]uint64{}
			for i, e := range t.Entries {
				if e.Kind == manifest.KindFile {
					stamps[e.Name] = d.dc.Stamps[i]
				}
			}
		}
	}
	d.sameFiles = aligned
	for i, c := range d.children {
		switch c.kind {
		case manifest.KindFile:
			if aligned {
				c.cached = d.dc.Stamps[i] == c.stamp
			} else if st, ok := stamps[c.name]; ok {
				c.cached = st == c.stamp
			}
			if !c.cached {
				d.sameFiles = false
				s.mu.Lock()
				s.toHash = append(s.toHash, hashJob{rel: join(d.rel, c.name), n: c})
				s.mu.Unlock()
			}
		case manifest.KindSymlink:
			if aligned && d.dc.Stamps[i] != c.stamp {
				d.sameFiles = false
			}
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

// hashAll reads and stores the files the cache could not vouch for.
func (s *scanner) hashAll() error {
	// Files of 256 KiB and more first, largest first, so the tail of the
	// work is small files; the others by path, so that the files of a
	// directory, which compress well together, meet in the store's blocks
	// (by size, the W3 project's first pack is 3.5% larger).
	slices.SortFunc(s.toHash, func(a, b hashJob) int {
		return cmp.Or(cmp.Compare(b.n.size>>18, a.n.size>>18), strings.Compare(a.rel, b.rel))
	})
	g, ctx := errgroup.WithContext(s.ctx)
	g.SetLimit(s.opts.Workers)
	for _, job := range s.toHash {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return s.hashFile(ctx, job) })
	}
	return g.Wait()
}

const readAttempts = 3

// hashFile stores one file's chunks. A file that changes while it is read,
// or is another file than the walk saw, is read again; after readAttempts
// tries the last read is kept, with a warning, and its stamp is left
// untrusted. A file that cannot be opened, or is larger than the size limit
// now, is left out, with a warning.
func (s *scanner) hashFile(ctx context.Context, job hashJob) error {
	for attempt := 1; ; attempt++ {
		content, st, stable, err := s.readFile(ctx, job)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var se storeError
			if errors.As(err, &se) {
				return se.err // the store failed, not the file: fail the scan
			}
			if errors.Is(err, errTooBig) {
				s.warn("%s: not captured: it grew past the %d-byte size limit during the scan", job.rel, s.opts.MaxFileSize)
				job.n.kind = 0
				return nil
			}
			if errors.Is(err, errNotRegular) || errors.Is(err, fs.ErrNotExist) { // became something else, or is gone
				s.warn("%s: not captured: %v", job.rel, err)
				job.n.kind = 0
				return nil
			}
			var pe *os.PathError
			if errors.As(err, &pe) { // there, but not readable
				s.warn("%s: not captured: %v", job.rel, err)
				job.n.kind = manifest.KindUnreadable
				return nil
			}
			return fmt.Errorf("%s: %w", job.rel, err)
		}
		if !stable && attempt < readAttempts {
			continue
		}
		if content.Grew { // nothing of it was stored
			s.warn("%s: not captured: it kept growing while being read", job.rel)
			job.n.kind = manifest.KindUnreadable
			return nil
		}
		scanStart := s.start
		if !stable {
			s.warn("%s: changed while being read; captured the last read", job.rel)
			scanStart = 0 // an untrusted stamp: read again next time
		}
		n := job.n
		n.chunks, n.size, n.lines, n.binary = content.Chunks, content.Size, content.Lines, content.Binary
		n.exec = st.Exec()
		n.stamp = statcache.FileStamp(content.Size, st.Mtime, st.Ctime, st.Ino, st.Mode, scanStart)
		n.cached = false
		fb := s.hashedB.Add(content.Size)
		fn := s.hashedN.Add(1)
		if s.opts.Progress != nil {
			s.opts.Progress(fn, fb)
		}
		return nil
	}
}

// storeError wraps a failure to store content, which must fail the scan:
// only failures to read the file leave the file out.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

// storePutter marks the errors of the Putter it wraps as storeErrors.
type storePutter struct{ put cas.Putter }

func (p storePutter) Put(ctx context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	id, err := p.put.Put(ctx, kind, data)
	if err != nil {
		return id, storeError{err}
	}
	return id, nil
}

// readFile reads job's file once, opened beneath the root, and stores its
// chunks, reading no more than the size limit allows. stable reports
// whether it is the file the walk saw and its metadata was the same before
// and after the read; st is the metadata from before.
func (s *scanner) readFile(ctx context.Context, job hashJob) (content manifest.Content, st osfs.Stat, stable bool, err error) {
	p := s.abs(job.rel)
	if testHook != nil {
		testHook("open", job.rel)
	}
	f, err := s.top.openFile(job.rel, p)
	if err != nil {
		return content, st, false, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer f.Close()
	if st, err = osfs.FileStat(f); err != nil {
		return content, st, false, err
	}
	if st.Type() != osfs.TypeRegular {
		return content, st, false, errNotRegular
	}
	limit := s.opts.MaxFileSize
	if job.n.captured {
		limit = math.MaxInt64
	}
	if st.Size > limit {
		return content, st, false, errTooBig
	}
	if testHook != nil {
		testHook("read", job.rel)
	}
	content, err = manifest.PutContent(ctx, storePutter{s.put}, f, st.Size, limit)
	if err != nil {
		// A read error of PutContent's own names no path yet; a store
		// error is the store's (and may be shared): left as it is.
		var se storeError
		var pe *os.PathError
		if !errors.As(err, &se) && errors.As(err, &pe) && pe.Path == "" {
			pe.Path = p
		}
		return content, st, false, err
	}
	if content.TooBig {
		return content, st, false, errTooBig
	}
	if content.Grew || st.Dev != job.n.dev || st.Ino != job.n.ino {
		return content, st, false, nil
	}
	after, err := osfs.FileStat(f)
	if err != nil {
		return content, st, false, err
	}
	stable = after.Size == st.Size && after.Mtime == st.Mtime && after.Ctime == st.Ctime &&
		after.Ino == st.Ino && after.Mode == st.Mode && content.Size == st.Size
	return content, st, stable, nil
}

// checkCachedTree makes sure a tree taken from the stat cache is stored
// before a new tree refers to it.
func (s *scanner) checkCachedTree(id cas.ID) error {
	stored, err := s.opts.Trees.Has(id)
	if err != nil {
		return err
	}
	if !stored {
		return errCacheDamaged
	}
	return nil
}

// buildTree stores the trees bottom-up, fills the result's counts and the
// stat cache records of the directories that changed, and sets each
// directory's tree. cached is true when nothing in or below n changed and
// its tree is the one the stat cache names; the caller checks that it is
// stored when a new tree refers to it (only there, so that an unchanged
// tree costs no lookups).
func (s *scanner) buildTree(n *node, res *Result) (cached bool, _ error) {
	d := n.dir
	fromCache, same, err := s.buildSubtrees(n, res)
	if err != nil {
		return false, err
	}
	if same {
		d.tree = d.dc.Tree // nothing in or below it changed
		return true, nil
	}
	for _, id := range fromCache {
		if err := s.checkCachedTree(id); err != nil {
			return false, err
		}
	}
	d.tree, err = s.storeTree(n, res)
	return false, err
}

// buildSubtrees builds the trees of n's subdirectories, counts its files
// and links into res, and reports children no longer captured as excluded.
// fromCache lists the subtrees taken from the stat cache; same is true when
// n's record in the cache still holds: its files and links, and every
// subtree, are as it records.
func (s *scanner) buildSubtrees(n *node, res *Result) (fromCache []cas.ID, same bool, _ error) {
	d := n.dir
	same = d.sameFiles
	sub := 0 // position among the subdirectories
	for _, c := range d.children {
		switch c.kind {
		case 0:
			s.exclude(join(d.rel, c.name))
			same = false
		case manifest.KindUnreadable:
			s.unreadable(join(d.rel, c.name))
			same = false
		case manifest.KindDir:
			cached, err := s.buildTree(c, res)
			if err != nil {
				return nil, false, err
			}
			id := c.dir.tree
			if cached {
				fromCache = append(fromCache, id)
			}
			if !same || sub >= len(d.dc.Subtrees) || d.dc.Subtrees[sub] != id {
				same = false
			}
			sub++
		default:
			res.Files++
			res.Bytes += c.size
		}
	}
	return fromCache, same && sub == len(d.dc.Subtrees), nil
}

// storeTree stores n's tree, whose subdirectories' trees are built, and
// puts its stat cache record into res.
func (s *scanner) storeTree(n *node, res *Result) (cas.ID, error) {
	d := n.dir
	t := manifest.Tree{Entries: make([]manifest.Entry, 0, len(d.children))}
	var rec statcache.Dir
	var names statcache.NamesHasher
	for _, c := range d.children {
		if c.kind == manifest.KindFile && c.cached {
			if err := s.reuseChunks(n, c, res); err != nil { // may leave it out
				return cas.ID{}, err
			}
		}
		e := manifest.Entry{Name: c.name, Kind: c.kind}
		switch c.kind {
		case 0:
			continue
		case manifest.KindDir:
			e.Tree = c.dir.tree
		case manifest.KindSymlink:
			e.Target, e.Size = c.target, c.size
		case manifest.KindFile:
			e.Exec, e.Size, e.Chunks, e.Lines, e.Binary = c.exec, c.size, c.chunks, c.lines, c.binary
		}
		t.Entries = append(t.Entries, e)
		names.Add(c.name, uint8(c.kind))
		switch c.kind {
		case manifest.KindDir:
			rec.Stamps = append(rec.Stamps, 0)
			rec.Subtrees = append(rec.Subtrees, e.Tree)
		case manifest.KindUnreadable:
			rec.Stamps = append(rec.Stamps, 0) // never vouched for: read again next time
		default:
			rec.Stamps = append(rec.Stamps, c.stamp)
		}
	}
	rec.Names = names.Sum()
	id, err := manifest.Put(s.ctx, s.put, t)
	if err != nil {
		return cas.ID{}, err
	}
	rec.Tree = id
	res.CachePut[d.rel] = rec
	return id, nil
}

// reuseChunks fills file c, a child of n vouched for by the stat
// cache, with the chunks, lines and binary flag of its entry in the cached
// tree. Without such an entry of the same size it reads the file instead,
// correcting the counts in res; when the file could not be read after all,
// it is reported as excluded (or unreadable) and c.kind says so.
func (s *scanner) reuseChunks(n, c *node, res *Result) error {
	d := n.dir
	if d.cachedTree == nil {
		ct, err := manifest.Load(s.ctx, s.opts.Trees, d.dc.Tree)
		if err != nil {
			ct = manifest.Tree{} // vouched-for files are read instead
		}
		d.cachedTree = &ct
	}
	if old, ok := d.cachedTree.Lookup(c.name); ok && old.Kind == manifest.KindFile && old.Size == c.size {
		c.chunks, c.lines, c.binary = old.Chunks, old.Lines, old.Binary
		return nil
	}
	counted := c.size // by buildSubtrees
	if err := s.hashFile(s.ctx, hashJob{rel: join(d.rel, c.name), n: c}); err != nil {
		return err
	}
	switch c.kind {
	case 0:
		s.exclude(join(d.rel, c.name))
	case manifest.KindUnreadable:
		s.unreadable(join(d.rel, c.name))
	default:
		res.Bytes += c.size - counted
		return nil
	}
	res.Files--
	res.Bytes -= counted
	return nil
}
