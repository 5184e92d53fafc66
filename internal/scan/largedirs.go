package scan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/manifest"
)

// walkLimit is how many files and links the walk lists before it fails:
// MaxFiles, or with MaxDirFiles 4 x MaxFiles, since the directories it
// excludes are counted while listed (excludeLargeDirs checks MaxFiles).
func (s *scanner) walkLimit() int64 {
	if s.opts.MaxDirFiles <= 0 {
		return int64(s.opts.MaxFiles)
	}
	return min(4*int64(s.opts.MaxFiles), math.MaxInt64/2)
}

// excludeLargeDirs applies Options.MaxDirFiles to the listed tree top:
// it takes out of the tree, outermost first, each directory that holds
// MaxDirFiles files and links or more and none the git index tracks
// (unless Options.Capture captures it), reports it excluded in place of
// what was excluded below it, and fails the scan when more than MaxFiles
// remain.
func (s *scanner) excludeLargeDirs(top *node) {
	if s.opts.MaxDirFiles <= 0 {
		return
	}
	counts := map[*dirNode]int64{}
	countFiles(top.dir, counts)
	gone := map[string]bool{}
	s.dropLargeDirs(top.dir, counts, gone)
	if len(gone) > 0 {
		below := func(rel string) bool { return underAny(rel, gone) }
		s.excluded = slices.DeleteFunc(s.excluded, below)
		s.unread = slices.DeleteFunc(s.unread, below)
		s.byDefault = slices.DeleteFunc(s.byDefault, below)
		for rel := range gone {
			s.excluded = append(s.excluded, rel)
		}
	}
	if s.files.Load() > int64(s.opts.MaxFiles) {
		s.fail(fmt.Errorf("%w: more than %d files under %s (raise --max-files or add a .gitignore)", ErrTooManyFiles, s.opts.MaxFiles, s.root))
	}
}

// countFiles records in counts, for directory d and each directory below
// it, the files and links the walk kept beneath it (those it counts for
// MaxFiles), and returns d's.
func countFiles(d *dirNode, counts map[*dirNode]int64) int64 {
	var n int64
	for _, c := range d.children {
		if c.kind == manifest.KindDir {
			n += countFiles(c.dir, counts)
		} else if c.dir == nil { // not a directory that could not be listed
			n++
		}
	}
	counts[d] = n
	return n
}

// dropLargeDirs takes out of directory d the subdirectories that
// MaxDirFiles excludes (see excludeLargeDirs), adding their paths to gone,
// and looks into the others.
func (s *scanner) dropLargeDirs(d *dirNode, counts map[*dirNode]int64, gone map[string]bool) {
	n := len(d.children)
	d.children = slices.DeleteFunc(d.children, func(c *node) bool {
		if c.kind != manifest.KindDir || counts[c.dir] < int64(s.opts.MaxDirFiles) || c.dir.captured ||
			s.tracked(c.dir.rel, true) || s.captures(c.dir.rel, true) {
			return false
		}
		gone[c.dir.rel] = true
		s.files.Add(-counts[c.dir])
		return true
	})
	for _, c := range d.children {
		if c.kind == manifest.KindDir {
			s.dropLargeDirs(c.dir, counts, gone)
		}
	}
	if len(d.children) != n {
		d.names = namesHash(d.children)
	}
}

// underAny says whether rel is one of the directories in dirs or lies
// below one.
func underAny(rel string, dirs map[string]bool) bool {
	for {
		if dirs[rel] {
			return true
		}
		i := strings.LastIndexByte(rel, '/')
		if i < 0 {
			return false
		}
		rel = rel[:i]
	}
}
