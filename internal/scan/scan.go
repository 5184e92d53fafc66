package scan

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	Workers     int   // files read at once (default readers: one a core, at most maxReaders)
	// Exclude lists gitignore-syntax patterns, relative to the root,
	// excluded as DefaultExcludes are: a .gitignore negation and the git
	// index override them alike, and ExcludedByDefault does not count them.
	Exclude []string
	// MaxDirFiles, above zero, excludes whole each directory below the
	// root that holds that many files and links or more (counted below it,
	// after the other exclusions) of which the git index tracks none; the
	// outermost such directory is reported. With it the walk lists up to
	// 4 x MaxFiles files before it fails, as those it excludes still count
	// while it lists; MaxFiles applies to what is kept.
	MaxDirFiles int
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
	// exclusion rule, a .gitignore, the size limit or MaxDirFiles leaves
	// out, and about each entry of a directory it captured: true captures
	// it all the same, whatever its size. The Skip list, leftovers, special files and
	// what cannot be read are never captured. A restore captures what it
	// will overwrite, so that its snapshot from before holds it.
	Capture func(rel string, dir bool) bool
	// KeepTree keeps the tree as the walk saw it in the Result, for
	// Result.Stamp: a restore compares what it overwrites with it.
	// Without it a directory's entries are dropped once its tree is
	// stored, while the files of the others are still being read, so a
	// scan of a big tree never holds every entry to the end.
	KeepTree bool
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
		o.Workers = readers()
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
	top       *node // the tree as the scan saw it, for Stamp: only with Options.KeepTree
}

// Stamp returns the stamp of the regular file at rel (a slash path) as
// the scan saw it, trusted: statcache.CurrentStamp of its metadata then.
// ok is false when the scan captured no regular file there, and always
// for a scan without Options.KeepTree, which keeps no tree.
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
// between the walk and the reading of its files (11,000 for a tree the
// size of Go's source, 100,000 for a large monorepo), so what only a
// directory needs is in dirNode, and the flags sit together.
type node struct {
	name string
	size int64
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
	// queued counts its files queued for reading and not read yet; the
	// last one read closes hashed (nil: none queued), which the tree's
	// building waits for.
	queued atomic.Int32
	hashed chan struct{}
	// links holds the targets of its links by name: here, not in every
	// node, which it would make 16 bytes larger (a node per file).
	links map[string]string
}

type scanner struct {
	ctx       context.Context
	root      string
	top       root      // the root directory, opened by List and again by Store: every open is relative to it
	rootStat  osfs.Stat // the root as List opened it
	put       cas.Putter
	opts      Options
	extra     *ignoreFile // Options.Exclude, compiled (nil: none)
	start     int64       // ns, real clock: for racily-clean decisions
	fine      bool        // the root's file system keeps nanosecond times (fineTimes)
	files     atomic.Int64
	bytes     atomic.Int64  // of the regular files listed (Listing.Bytes)
	sem       chan struct{} // bounds parallel directory listing
	mu        sync.Mutex    // guards the fields below
	excluded  []string
	unread    []string
	byDefault []string // entries the default list alone excluded
	indexOnce sync.Once
	index     *gitindex.Tracked // the project's git index, once read (nil: none)
	warnings  []string
	leftovers []string
	toHash    []queued
	cacheHits int // directories with a stat cache record
	firstErr  error
	hashedN   atomic.Int64
	hashedB   atomic.Int64
}

// testHook, when set by a test, is called at points of the scan where
// another process could change the tree: "opendir" before a directory is
// opened, "open" before a file is opened, "read" after a file is opened and
// before it is read; and "built" once a directory's tree is built (and,
// without Options.KeepTree, its entries dropped).
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

// hashJob is a file to read: n, at rel.
type hashJob struct {
	rel string
	n   *node
}

// queued is a file queued for reading: n, in directory d. Its path is
// made when it is read: a big first snapshot queues every file, and a
// million paths held at once took a tenth of its memory.
type queued struct {
	d *dirNode
	n *node
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
// Exclude, MaxDirFiles, Skip and Capture; Store takes the rest.
func List(ctx context.Context, root string, opts Options) (*Listing, error) {
	opts.Cache, opts.Trees, opts.Progress = nil, nil, nil
	opts = opts.withDefaults()
	s := &scanner{
		ctx: ctx, root: root, opts: opts,
		start: now().UnixNano(),
		sem:   make(chan struct{}, walkers()),
	}
	if len(opts.Exclude) > 0 {
		s.extra = parseIgnore(nil, "", []byte(strings.Join(opts.Exclude, "\n")))
	}
	top, st, err := openRoot(root)
	if err != nil {
		return nil, err
	}
	defer top.close() // Store opens the root again
	s.top, s.rootStat, s.fine = top, st, fineTimes(top)
	tree := &node{kind: manifest.KindDir, dir: &dirNode{}}
	var wg sync.WaitGroup
	s.walkDir(tree, nil, &wg)
	wg.Wait()
	if s.firstErr == nil {
		s.excludeLargeDirs(tree)
	}
	if s.firstErr != nil {
		return nil, s.firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &Listing{s: s, top: tree}, nil
}

// Bytes is the size of the regular files the walk listed: about what a
// snapshot without a stat cache reads (a directory that MaxDirFiles
// excluded after the walk still counts).
func (l *Listing) Bytes() int64 { return l.s.bytes.Load() }

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
	cacheRemove := s.cacheRemove(l.top) // before the trees' building drops the entries
	res := Result{CachePut: map[string]statcache.Dir{}}
	cached, err := s.hashAndBuild(l.top, &res)
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
	res.CacheRemove = cacheRemove
	res.Excluded = s.excluded
	slices.Sort(res.Excluded)
	res.Unreadable = s.unread
	slices.Sort(res.Unreadable)
	res.ExcludedByDefault = int64(len(s.byDefault))
	res.Warnings = s.warnings
	slices.Sort(res.Warnings)
	res.Leftovers = s.leftovers
	if s.opts.KeepTree {
		res.top = l.top
	}
	return res, nil
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
