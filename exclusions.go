package casckpt

import (
	"fmt"
	"slices"
	"strings"
)

// CheckExclusions refuses (ErrRefused) an exclude pattern that is empty,
// spans lines or is a .gitignore comment or negation, and a negative
// directory file limit (SnapshotOptions.Exclude, MaxDirFiles).
func CheckExclusions(patterns []string, maxDirFiles int) error {
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" || strings.ContainsAny(p, "\r\n") || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "!") {
			return fmt.Errorf("%w: exclude pattern %q: one gitignore pattern, neither empty, a comment nor a negation", ErrRefused, p)
		}
	}
	if maxDirFiles < 0 {
		return fmt.Errorf("%w: a directory file limit of %d", ErrRefused, maxDirFiles)
	}
	return nil
}

// sameExclusions says whether snapshot r was taken with the exclusions of
// opts.
func sameExclusions(r record, opts SnapshotOptions) bool {
	return slices.Equal(r.Exclude, opts.Exclude) && r.MaxDirFiles == opts.MaxDirFiles
}
