package casckpt

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Ref is a snapshot reference as a user writes it: the full 64-digit ID, a
// unique hex prefix of at least MinPrefix digits, @N for the N-th newest
// snapshot of the project (@1 is the newest, so @N moves with every new
// snapshot), or #N for the snapshot whose stable number (Snapshot.Serial)
// is N.
type Ref string

// MinPrefix is the shortest hex prefix a Ref may be.
const MinPrefix = 4

// parsedRef is a syntactically valid Ref.
type parsedRef struct {
	nth    int    // >0 for @N
	serial uint64 // >0 for #N
	prefix string // lower-case hex otherwise
}

// parseRef checks a reference's syntax. Anything else than hex digits, @N
// or #N is refused, so a reference can never be taken for a flag or a path.
func parseRef(r Ref) (parsedRef, error) {
	s := string(r)
	if n, ok := strings.CutPrefix(s, "@"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 || strconv.Itoa(v) != n {
			return parsedRef{}, fmt.Errorf("%w %q: @N needs a whole number N of at least 1", ErrBadRef, s)
		}
		return parsedRef{nth: v}, nil
	}
	if n, ok := strings.CutPrefix(s, "#"); ok {
		v, err := strconv.ParseUint(n, 10, 64)
		if err != nil || v < 1 || strconv.FormatUint(v, 10) != n {
			return parsedRef{}, fmt.Errorf("%w %q: #N needs a whole number N of at least 1", ErrBadRef, s)
		}
		return parsedRef{serial: v}, nil
	}
	if len(s) < MinPrefix || len(s) > 64 {
		return parsedRef{}, fmt.Errorf("%w %q: give 4 to 64 hex digits of a snapshot id, @N or #N", ErrBadRef, s)
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return parsedRef{}, fmt.Errorf("%w %q: give 4 to 64 hex digits of a snapshot id, @N or #N", ErrBadRef, s)
		}
	}
	return parsedRef{prefix: strings.ToLower(s)}, nil
}

// resolve finds the snapshot r names among a project's snapshots (newest
// first).
func resolve(snaps []record, r Ref, project string) (record, int, error) {
	p, err := parseRef(r)
	if err != nil {
		return record{}, 0, err
	}
	project = workdirName(project)
	if p.nth > 0 {
		if p.nth > len(snaps) {
			return record{}, 0, fmt.Errorf("snapshot %s: %w: %s has %d snapshots", r, ErrNotFound, project, len(snaps))
		}
		return snaps[p.nth-1], p.nth - 1, nil
	}
	if p.serial > 0 {
		for i, sn := range snaps {
			if sn.Seq == p.serial {
				return sn, i, nil
			}
		}
		return record{}, 0, fmt.Errorf("snapshot %s: %w in %s (it was dropped, or never taken; see casckpt list)", r, ErrNotFound, project)
	}
	found := -1
	for i, sn := range snaps {
		if strings.HasPrefix(sn.ID.String(), p.prefix) {
			if found >= 0 {
				return record{}, 0, fmt.Errorf("snapshot %s: %w: matches %s and %s; give more digits", r, ErrAmbiguousRef, snaps[found].ID.Short(), sn.ID.Short())
			}
			found = i
		}
	}
	if found < 0 {
		return record{}, 0, fmt.Errorf("snapshot %s: %w in %s (see casckpt list)", r, ErrNotFound, project)
	}
	return snaps[found], found, nil
}

// SnapshotPlace is where a snapshot stands in its project: its stable
// number (#Serial) and its place among the project's snapshots now,
// newest first from 1 (@Number).
type SnapshotPlace struct {
	Serial uint64
	Number int
}

// Place returns where snapshot ref of the project in dir stands now; a
// command that took a snapshot says with it which @N the snapshot it
// acted on has become.
func (s *Store) Place(ctx context.Context, dir string, ref Ref) (SnapshotPlace, error) {
	workdir, err := knownWorkdir(dir)
	if err != nil {
		return SnapshotPlace{}, err
	}
	var place SnapshotPlace
	err = s.read(ctx, func(v view) error {
		snaps, err := v.Tx.Snapshots(workdir)
		if err != nil {
			return err
		}
		sn, i, err := resolve(snaps, ref, workdir)
		place = SnapshotPlace{Serial: sn.Seq, Number: i + 1}
		return err
	})
	return place, err
}

// Validate checks the reference's syntax, without looking anything up.
func (r Ref) Validate() error {
	_, err := parseRef(r)
	return err
}
