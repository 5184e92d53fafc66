package testtree

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Digest is a comparable record of a tree on disk that does not hold its
// bytes (Read does): each path below the root, slash-separated and
// relative to it ("." for the root itself), mapped to what is there. Two
// digests are equal (maps.Equal) exactly when nothing under the root
// changed: no path added, removed or retyped, no mode, time or content
// changed (a file created and removed again shows through its directory's
// modification time).
type Digest map[string]Sum

// Sum is what a Digest records of one path.
type Sum struct {
	Mode    fs.FileMode // type and permission bits, of the path itself (lstat)
	ModTime int64       // modification time, in nanoseconds since the epoch
	// Hash is the SHA-256 of a regular file's bytes or of a link's target;
	// zero for a directory or any other kind.
	Hash [32]byte
}

// ReadDigest returns the digest of the tree under root, following no link.
func ReadDigest(tb testing.TB, root string) Digest {
	tb.Helper()
	d := Digest{}
	err := filepath.WalkDir(root, func(full string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		s := Sum{Mode: info.Mode(), ModTime: info.ModTime().UnixNano()}
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			s.Hash = sha256.Sum256(b)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			s.Hash = sha256.Sum256([]byte(target))
		}
		rel, _ := filepath.Rel(root, full)
		d[filepath.ToSlash(rel)] = s
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// Files returns the content hashes of the regular files only: what a
// restore must reproduce exactly, though it sets no times and may leave
// modes to the umask.
func (d Digest) Files() map[string][32]byte {
	out := map[string][32]byte{}
	for p, s := range d {
		if s.Mode.IsRegular() {
			out[p] = s.Hash
		}
	}
	return out
}
