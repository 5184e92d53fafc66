package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sumsName is the checksum file of a release.
const sumsName = "SHA256SUMS"

// writeSums writes SHA256SUMS in dir: a "HEX  NAME" line (sha256sum's
// format) for each of the files, in name order.
func writeSums(dir string, names []string) error {
	var b strings.Builder
	for _, name := range slices.Sorted(slices.Values(names)) {
		sum, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, sumsName), []byte(b.String()), 0o644)
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
