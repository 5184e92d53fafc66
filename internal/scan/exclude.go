package scan

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/casckpt/casckpt/internal/gitindex"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// included stats one entry e of directory d (open as dh) without
// following a link and tells whether the walk keeps it. An invalid name
// and one excluded by a rule (DefaultExcludes or Options.Exclude, which
// yield alike to a .gitignore negation and the git index), a .gitignore
// or the Skip list are reported as excluded; an entry that cannot be
// stat'ed is kept with st.Mode 0, for describe to record as unreadable; a
// killed restore's temporary file as a leftover; an entry vanished since the
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
	var byDefault, byOption bool
	if !ruled && m != negated {
		byDefault = defaults.excluded(name, isDir)
		byOption = !byDefault && s.extra != nil && s.extra.match(join(rel, name), isDir) == ignored
		if (byDefault || byOption) && s.tracked(join(rel, name), isDir) {
			byDefault, byOption = false, false
		}
	}
	if (ruled || byDefault || byOption) && !s.captures(join(rel, name), isDir) {
		s.exclude(join(rel, name))
		if byDefault {
			s.mu.Lock()
			s.byDefault = append(s.byDefault, join(rel, name))
			s.mu.Unlock()
		}
		return st, false, false
	}
	return st, ruled || byDefault || byOption, true
}

// captures says whether Options.Capture captures the excluded entry rel.
func (s *scanner) captures(rel string, dir bool) bool {
	return s.opts.Capture != nil && s.opts.Capture(rel, dir)
}

// tracked reports whether the project's git index tracks rel (a file, or
// a file below the directory rel). The index is read once, on the first
// question: only a path an exclusion rule matches asks it, and each
// directory Options.MaxDirFiles would exclude. An index that
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
