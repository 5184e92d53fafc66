package restorer

import (
	"runtime"
	"strings"

	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/manifest"
)

// The reasons a restore leaves out a path that the file system it writes
// to cannot hold.
const (
	// ReasonCaseCollision: the path differs only in case from one written
	// before it (or is below such a path), and the file system ignores
	// case: writing it would overwrite the other.
	ReasonCaseCollision = "differs only in case from another path of the snapshot, and this file system ignores case"
	// ReasonWindowsName prefixes why Windows cannot hold a name of the
	// path (osfs.WindowsNameProblem).
	ReasonWindowsName = "Windows cannot hold this name: "
	// ReasonNoSymlinks: the user may not make symbolic links (Windows
	// without Developer Mode or the privilege).
	ReasonNoSymlinks = "this user may not make symbolic links (on Windows, turn on Developer Mode)"
)

// Platform is what the file system a restore writes to cannot hold.
type Platform struct {
	// FoldsCase: names that differ only in case name one entry (the
	// default file systems of macOS and Windows).
	FoldsCase bool
	// WindowsNames: the names Windows refuses (osfs.WindowsNameProblem)
	// cannot be made.
	WindowsNames bool
	// NoSymlinks: the user may not make symbolic links.
	NoSymlinks bool
}

// HostPlatform is the platform of directory dir on this system.
func HostPlatform(dir string) Platform {
	return Platform{FoldsCase: osfs.FoldsCase(dir), WindowsNames: runtime.GOOS == "windows", NoSymlinks: !osfs.CanSymlink()}
}

// Fit returns the part of plan that the platform can hold, and the paths
// it leaves out, with why, in plan order. A path with a name Windows
// refuses is left out where Windows names apply, a symbolic link where
// the user may not make one (the path keeps what it holds); where case is
// ignored,
// of the paths written that differ only in case the first in plan order
// is written and each later one left out. Everything below a path left
// out is left out too. Deletions are all kept: only what exists can be
// deleted.
func (p Platform) Fit(plan Plan) (Plan, []Kept) {
	if p == (Platform{}) {
		return plan, nil
	}
	out := Plan{Changes: []manifest.Change{}, Skipped: plan.Skipped}
	var kept []Kept
	written := map[string]string{} // by folded path: the path written
	var left []Kept                // directories left out, for what is below them
	for _, c := range plan.Changes {
		reason := ""
		switch {
		case c.Status == manifest.Deleted:
		case p.NoSymlinks && c.New.Kind == manifest.KindSymlink:
			reason = ReasonNoSymlinks
		default:
			reason = p.problem(c.Path, written, left)
		}
		if reason == "" {
			out.add(c)
			continue
		}
		k := Kept{Path: c.Path, Reason: reason}
		kept = append(kept, k)
		left = append(left, k)
	}
	return out, kept
}

// problem says why the platform cannot hold the path p written after the
// paths written (by folded path) and below none of left, or "".
func (p Platform) problem(rel string, written map[string]string, left []Kept) string {
	for _, l := range left {
		if under(rel, l.Path) {
			return l.Reason
		}
	}
	if p.WindowsNames {
		for name := range strings.SplitSeq(rel, "/") {
			if why := osfs.WindowsNameProblem(name); why != "" {
				return ReasonWindowsName + why
			}
		}
	}
	if p.FoldsCase {
		key := osfs.FoldCase(rel)
		if other, ok := written[key]; ok && other != rel {
			return ReasonCaseCollision
		}
		written[key] = rel
	}
	return ""
}
