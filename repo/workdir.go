package repo

import (
	"strings"

	"github.com/casckpt/casckpt/index"
)

// In a store that several machines share a project is a machine and a
// path (docs/bucket.md, "Machines"). The records keep the projects of
// this machine under their path, as a store in a directory does, and
// those of machine M under ForeignWorkdir(M, path): a NUL, M, a NUL and
// the path. No path holds a NUL, so no directory resolves to another
// machine's project, and no file system call can act on one.

// ForeignWorkdir is the records' name of machine m's project at path.
func ForeignWorkdir(m, path string) string { return "\x00" + m + "\x00" + path }

// SplitWorkdir splits the name under which the records know a project
// into its machine ("" for this machine's) and its path.
func SplitWorkdir(workdir string) (machine, path string) {
	rest, ok := strings.CutPrefix(workdir, "\x00")
	if !ok {
		return "", workdir
	}
	machine, path, _ = strings.Cut(rest, "\x00")
	return machine, path
}

// SaysMore reports whether turn record a says more than b, another record
// of the same turn: it ended and b did not, or it ended or started later.
func SaysMore(a, b index.Turn) bool {
	if a.Open() != b.Open() {
		return !a.Open()
	}
	if c := a.Ended.Compare(b.Ended); c != 0 {
		return c > 0
	}
	if c := a.Started.Compare(b.Started); c != 0 {
		return c > 0
	}
	return strings.Compare(string(a.BackupID[:]), string(b.BackupID[:])) > 0
}
