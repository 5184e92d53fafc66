package gitindex

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrCorrupt is returned for an index file that does not parse.
var ErrCorrupt = errors.New("git index is damaged or of an unknown kind")

// MaxSize bounds the index file Load reads (a repository of a million
// files has an index of about 100 MiB).
const MaxSize = 256 << 20

// Tracked is the set of paths an index tracks, relative to one directory.
// The zero value tracks nothing.
type Tracked struct {
	names []string // sorted; a sparse index's directory entries end in '/'
}

// Has reports whether rel (slash-separated, relative to the directory
// Tracked was loaded for) is tracked: a file the index names, or a
// directory that it names (a submodule) or below which it names one.
func (t *Tracked) Has(rel string, isDir bool) bool {
	if t == nil {
		return false
	}
	_, found := slices.BinarySearch(t.names, rel) // for a directory: a submodule's gitlink
	if found || !isDir {
		return found
	}
	dir := rel + "/"
	i, _ := slices.BinarySearch(t.names, dir)
	return i < len(t.names) && strings.HasPrefix(t.names[i], dir)
}

// Len is the number of tracked names.
func (t *Tracked) Len() int {
	if t == nil {
		return 0
	}
	return len(t.names)
}

// Load reads the index of the repository that holds directory dir (an
// absolute, clean path): its own .git, or the nearest ancestor's. It
// returns nil, and no error, when there is no repository or its index is
// missing (a repository with nothing added yet).
func Load(dir string) (*Tracked, error) {
	prefix := ""
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		if st, err := os.Stat(gitPath); err == nil { // a .git link is followed, as git does
			indexPath, err := indexOf(d, gitPath, st)
			if err != nil {
				return nil, err
			}
			names, err := readIndex(indexPath)
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", indexPath, err)
			}
			return &Tracked{names: below(names, prefix)}, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, nil
		}
		prefix = filepath.Base(d) + "/" + prefix
		d = parent
	}
}

// indexOf returns the path of the index of the repository whose .git
// entry, in directory top, is gitPath (st: its Stat).
func indexOf(top, gitPath string, st os.FileInfo) (string, error) {
	if st.IsDir() {
		return filepath.Join(gitPath, "index"), nil
	}
	if !st.Mode().IsRegular() || st.Size() > 4096 {
		return "", fmt.Errorf("%s: neither a directory nor a gitdir file", gitPath)
	}
	b, err := os.ReadFile(gitPath)
	if err != nil {
		return "", err
	}
	gitdir, ok := ParseGitFile(b)
	if !ok {
		return "", fmt.Errorf("%s: not a \"gitdir: PATH\" file", gitPath)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(top, gitdir)
	}
	return filepath.Join(gitdir, "index"), nil
}

// ParseGitFile parses a .git file: one line "gitdir: PATH".
func ParseGitFile(b []byte) (gitdir string, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	rest, found := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("gitdir: "))
	if !found || len(rest) == 0 || bytes.IndexByte(rest, 0) >= 0 {
		return "", false
	}
	return string(rest), true
}

// readIndex reads and decodes the index file at p.
func readIndex(p string) ([]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxSize)
	}
	return Decode(b)
}

// below returns the names that lie below directory prefix ("" or ending
// in '/'), without it; names is sorted, and so is the result.
func below(names []string, prefix string) []string {
	if prefix == "" {
		return names
	}
	i, _ := slices.BinarySearch(names, prefix)
	j := i
	for j < len(names) && strings.HasPrefix(names[j], prefix) {
		names[j] = names[j][len(prefix):]
		j++
	}
	return names[i:j]
}

// Decode parses an index file (versions 2, 3 and 4; SHA-1 or SHA-256)
// and returns the names of its entries in index order (sorted; a name
// appears once per stage of a conflict). It checks the trailing checksum
// and the layout of every entry, and fails with ErrCorrupt.
func Decode(b []byte) ([]string, error) {
	hashLen, ok := checksummed(b)
	if !ok {
		return nil, fmt.Errorf("%w: bad checksum", ErrCorrupt)
	}
	d := decoder{b: b[12 : len(b)-hashLen]}
	version := binary.BigEndian.Uint32(b[4:8])
	count := binary.BigEndian.Uint32(b[8:12])
	if string(b[:4]) != "DIRC" || version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: not an index of version 2, 3 or 4", ErrCorrupt)
	}
	// An entry takes at least 1+1 bytes in version 4, 62 elsewhere.
	if uint64(count)*2 > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: %d entries cannot fit", ErrCorrupt, count)
	}
	names := make([]string, 0, count)
	prev := ""
	// Names of versions 2 and 3 are taken from one copy of the file.
	all := string(d.b)
	for range count {
		name, err := d.entry(version, hashLen, prev, all)
		if err != nil {
			return nil, err
		}
		if name == "" || name < prev {
			return nil, fmt.Errorf("%w: entry %q empty or out of order", ErrCorrupt, name)
		}
		names = append(names, name)
		prev = name
	}
	if err := d.extensions(); err != nil {
		return nil, err
	}
	return names, nil
}

// checksummed reports whether b ends in the SHA-1 or SHA-256 of what
// precedes it, and which (the length of the repository's object names).
func checksummed(b []byte) (hashLen int, ok bool) {
	if len(b) >= 12+sha1.Size {
		if sum := sha1.Sum(b[:len(b)-sha1.Size]); bytes.Equal(sum[:], b[len(b)-sha1.Size:]) {
			return sha1.Size, true
		}
	}
	if len(b) >= 12+sha256.Size {
		if sum := sha256.Sum256(b[:len(b)-sha256.Size]); bytes.Equal(sum[:], b[len(b)-sha256.Size:]) {
			return sha256.Size, true
		}
	}
	return 0, false
}

// decoder reads the entries and extensions of an index: b is what is
// left of them, off its offset from their start.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) take(n int) ([]byte, error) {
	if n < 0 || n > len(d.b) {
		return nil, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	s := d.b[:n]
	d.b, d.off = d.b[n:], d.off+n
	return s, nil
}

// Entry layout: ctime, mtime (8 bytes each), dev, ino, mode, uid, gid,
// size (4 each), the object name, 16 bits of flags.
const (
	statLen      = 40
	flagExtended = 0x4000
	nameMask     = 0xfff
)

// entry reads one entry and returns its name; prev is the previous
// entry's (version 4 names are relative to it), all the entries' bytes
// as a string (names of versions 2 and 3 are substrings of it).
func (d *decoder) entry(version uint32, hashLen int, prev, all string) (string, error) {
	head, err := d.take(statLen + hashLen + 2)
	if err != nil {
		return "", err
	}
	headLen := len(head)
	flags := binary.BigEndian.Uint16(head[statLen+hashLen:])
	if flags&flagExtended != 0 {
		if version < 3 {
			return "", fmt.Errorf("%w: extended flags in a version 2 index", ErrCorrupt)
		}
		if _, err := d.take(2); err != nil {
			return "", err
		}
		headLen += 2
	}
	if version == 4 {
		strip, err := d.varint()
		if err != nil {
			return "", err
		}
		if strip > uint64(len(prev)) {
			return "", fmt.Errorf("%w: a name strips more than the previous one holds", ErrCorrupt)
		}
		suffix, err := d.cString()
		if err != nil {
			return "", err
		}
		return prev[:len(prev)-int(strip)] + string(suffix), nil
	}
	start := d.off
	n := int(flags & nameMask)
	if n == nameMask { // 4095 bytes or more: NUL-terminated
		if n = bytes.IndexByte(d.b, 0); n < nameMask {
			return "", fmt.Errorf("%w: a long name that is short or unterminated", ErrCorrupt)
		}
	}
	if _, err := d.take(n); err != nil {
		return "", err
	}
	// Padded with 1 to 8 NULs to a multiple of 8 bytes.
	pad, err := d.take(8 - (headLen+n)%8)
	if err != nil {
		return "", err
	}
	name := all[start : start+n]
	if strings.IndexByte(name, 0) >= 0 || bytes.Count(pad, []byte{0}) != len(pad) {
		return "", fmt.Errorf("%w: bad name or padding", ErrCorrupt)
	}
	return name, nil
}

// cString reads a NUL-terminated string, without the NUL.
func (d *decoder) cString() ([]byte, error) {
	i := bytes.IndexByte(d.b, 0)
	if i < 0 {
		return nil, fmt.Errorf("%w: truncated name", ErrCorrupt)
	}
	s, _ := d.take(i + 1)
	return s[:i], nil
}

// varint reads git's offset encoding of version 4 (each continuation
// adds one, so that each value has one encoding).
func (d *decoder) varint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		c, err := d.take(1)
		if err != nil {
			return 0, err
		}
		if i > 0 {
			v++
		}
		if v > 1<<56 {
			return 0, fmt.Errorf("%w: varint too large", ErrCorrupt)
		}
		v = v<<7 | uint64(c[0]&0x7f)
		if c[0]&0x80 == 0 {
			return v, nil
		}
	}
}

// extensions checks the extensions after the entries: an optional one
// (its signature starts with 'A' to 'Z') is skipped, as is "sdir" (a
// sparse index, whose directory entries are names); any other, the split
// index's "link" among them, means the entries are not all here.
func (d *decoder) extensions() error {
	for len(d.b) > 0 {
		head, err := d.take(8)
		if err != nil {
			return err
		}
		sig := string(head[:4])
		if _, err := d.take(int(binary.BigEndian.Uint32(head[4:]))); err != nil {
			return err
		}
		if (sig[0] < 'A' || sig[0] > 'Z') && sig != "sdir" {
			return fmt.Errorf("%w: required extension %q (a split index?) is not supported", ErrCorrupt, sig)
		}
	}
	return nil
}
