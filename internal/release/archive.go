package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// An entry is one file of an archive.
type entry struct {
	name string // slash-separated, relative
	data []byte
	mode os.FileMode
}

// epoch is every entry's time, so that an archive depends on its files
// alone (and zip, the MS-DOS format, can store it).
var epoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// writeArchive writes target t's archive of the binaries bin with
// README.md and the licences, all in one directory named as the archive;
// it returns the archive's name.
func writeArchive(root, out string, t target, version string, bin binaries) (string, error) {
	base := t.archiveName(version)
	files, err := readEntries(root, base+"/", map[string]string{t.exe(): bin.main, t.companionExe(): bin.companion, "README.md": "README.md"})
	if err != nil {
		return "", err
	}
	if t.goos == "windows" {
		return base + ".zip", writeZip(filepath.Join(out, base+".zip"), files)
	}
	return base + ".tar.gz", writeTarGz(filepath.Join(out, base+".tar.gz"), files)
}

// licences are the licence files every package carries: the archive name
// of each and its path in the repository.
var licences = map[string]string{"LICENSE": "LICENSE", "LICENSE.textdiff": "internal/textdiff/LICENSE"}

// readEntries reads the files named (archive name: path, relative to root
// unless absolute) and the licences into entries under prefix; the
// binaries (casckpt, casckpt.exe) are executable.
func readEntries(root, prefix string, named map[string]string) ([]entry, error) {
	var es []entry
	for _, m := range []map[string]string{named, licences} {
		for name, path := range m {
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, path)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			mode := os.FileMode(0o644)
			if base := strings.TrimSuffix(pathpkg.Base(name), ".exe"); base == "casckpt" || base == "casckpt-full" {
				mode = 0o755 // a binary, or the npm package's launcher
			}
			es = append(es, entry{prefix + name, data, mode})
		}
	}
	sortEntries(es)
	return es, nil
}

// sortEntries puts the entries in name order, so an archive's bytes do
// not depend on map order.
func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
}

// writeTarGz writes the entries as a gzipped tar file at path.
func writeTarGz(path string, es []entry) error {
	return writeFile(path, func(w io.Writer) error {
		gz := gzip.NewWriter(w)
		tw := tar.NewWriter(gz)
		for _, e := range es {
			h := &tar.Header{Name: e.name, Mode: int64(e.mode), Size: int64(len(e.data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := tw.Write(e.data); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return gz.Close()
	})
}

// writeZip writes the entries as a zip file at path.
func writeZip(path string, es []entry) error {
	return writeFile(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, e := range es {
			h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: epoch}
			h.SetMode(e.mode)
			f, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if _, err := f.Write(e.data); err != nil {
				return err
			}
		}
		return zw.Close()
	})
}

// writeFile creates path and fills it with fill.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
