//go:build linux

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// resticPeer backs projects up to one restic repository, as a user of
// restic would for checkpoints: a backup per snapshot with the contract's
// excludes, forget --keep-last N --prune past the limit, restore in place.
// It is optional: benchmarks skip it where restic is not installed.
type resticPeer struct {
	tb   testing.TB
	repo string
	// procMeter counts every restic process run: CPU time and the largest
	// resident size (maxRSS, KiB).
	procMeter
	// count of snapshots per project path
	count map[string]int
	// flags come before every command; env is restic's environment.
	flags, env []string
}

func newResticPeer(tb testing.TB, repo string) *resticPeer {
	tb.Helper()
	if _, err := exec.LookPath("restic"); err != nil {
		tb.Skip("restic is not installed (Debian package restic): the restic peer cannot run")
	}
	return startRestic(tb, repo, []string{"--no-cache"}, []string{"RESTIC_PASSWORD=bench", "HOME=" + repo, "PATH=" + os.Getenv("PATH")})
}

// startRestic initialises repository repo (untimed) with flags before
// every command and env as restic's environment.
func startRestic(tb testing.TB, repo string, flags, env []string) *resticPeer {
	tb.Helper()
	r := &resticPeer{tb: tb, repo: repo, count: map[string]int{}, flags: flags, env: env}
	r.must("init")
	return r
}

func (r *resticPeer) run(args ...string) ([]byte, error) {
	cmd := exec.Command("restic", slices.Concat([]string{"--repo", r.repo, "--quiet"}, r.flags, args)...)
	cmd.Env = r.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := r.procMeter.run(r.tb, cmd)
	if err != nil {
		return nil, fmt.Errorf("restic %v: %v: %s", args, err, errb.String())
	}
	return out.Bytes(), nil
}

func (r *resticPeer) must(args ...string) []byte {
	r.tb.Helper()
	out, err := r.run(args...)
	if err != nil {
		r.tb.Fatal(err)
	}
	return out
}

// Snapshot backs dir up and keeps its newest keep snapshots.
func (r *resticPeer) Snapshot(dir string, keep int) {
	args := []string{"backup", dir, "--tag", projectHash(dir)}
	for _, e := range defaultExcludes {
		args = append(args, "--exclude", filepath.Clean(e))
	}
	r.must(args...)
	r.count[dir]++
	if keep > 0 && r.count[dir] > keep {
		r.must("forget", "--tag", projectHash(dir), "--keep-last", fmt.Sprint(keep), "--prune")
		r.count[dir] = keep
	}
}

// Snapshots lists a project's snapshot IDs, oldest first.
func (r *resticPeer) Snapshots(dir string) []string {
	var snaps []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.must("snapshots", "--json", "--tag", projectHash(dir)), &snaps); err != nil {
		r.tb.Fatal(err)
	}
	ids := make([]string, len(snaps))
	for i, s := range snaps {
		ids[i] = s.ID
	}
	return ids
}

// Restore writes snapshot id over dir, in place: the snapshot holds dir's
// absolute paths, so the target is / (files created since are left).
func (r *resticPeer) Restore(_, id string) {
	r.must("restore", id, "--target", "/")
}

type resticW3Peer struct{ r *resticPeer }

func (p resticW3Peer) snapshot(dir, _ string) { p.r.Snapshot(dir, 20) }
func (p resticW3Peer) storeDir() string       { return p.r.repo }
