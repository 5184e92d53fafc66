package osfs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// windowsDevices are the names Windows keeps for devices, in any case and
// with any extension ("nul.txt" is NUL too).
var windowsDevices = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"COM¹": true, "COM²": true, "COM³": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	"LPT¹": true, "LPT²": true, "LPT³": true,
}

// WindowsNameProblem returns why Windows cannot hold an entry named name
// (one path component), or "" when it can: a device name (CON, NUL,
// COM1, LPT1, ... in any case, with or without an extension), a name that
// ends in a dot or a space (Windows drops them, so the entry would get
// another name), or a character Windows forbids in names (< > : " \ | ?
// * and the control characters).
func WindowsNameProblem(name string) string {
	base, _, _ := strings.Cut(name, ".")
	if windowsDevices[strings.ToUpper(strings.TrimRight(base, " "))] {
		return fmt.Sprintf("%q is a name Windows keeps for a device", name)
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return fmt.Sprintf("%q ends in a dot or a space, which Windows drops", name)
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || strings.ContainsRune(`<>:"\|?*`, r) }); i >= 0 {
		return fmt.Sprintf("%q holds %q, which Windows forbids in names", name, name[i])
	}
	return ""
}

// FoldCase returns the key under which a file system that ignores case
// files the path p: two paths with the same key name one entry there. It
// maps each letter to the smallest of its Unicode simple case folds (as
// strings.EqualFold compares), so "README" and "readme" have one key.
func FoldCase(p string) string {
	return strings.Map(func(r rune) rune {
		smallest := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			smallest = min(smallest, f)
		}
		return smallest
	}, p)
}

// FoldsCase reports whether the file system holding the directory dir
// ignores case in names: it looks up dir (or the nearest directory above
// it whose name has a letter) under its name with the case of each letter
// swapped, and compares what it finds. Where no name on the way has a
// letter, it answers for the system's default file system: true on macOS
// and Windows.
func FoldsCase(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		base := filepath.Base(d)
		if swapped := swapCase(base); swapped != base {
			a, errA := os.Stat(d)
			b, errB := os.Stat(filepath.Join(filepath.Dir(d), swapped))
			return errA == nil && errB == nil && os.SameFile(a, b)
		}
		if filepath.Dir(d) == d {
			return runtime.GOOS == "darwin" || runtime.GOOS == "windows"
		}
	}
}

// swapCase turns each upper-case letter of s to lower case and the
// reverse.
func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}
