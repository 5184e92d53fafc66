//go:build linux

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/hermes"
)

// migrateSubtrees are 20 disjoint GOROOT/src subtrees of roughly 100 to 360
// files each: one per project of BenchmarkMigrate.
var migrateSubtrees = []string{
	"archive", "cmd/go/internal", "cmd/internal/obj", "cmd/link", "compress", "crypto/internal/fips140",
	"crypto/tls", "debug", "encoding", "go/doc", "go/types", "image", "internal/runtime", "internal/syscall",
	"internal/trace", "internal/types", "math", "net/http", "os", "syscall",
}

// BenchmarkMigrate imports a Hermes shared store (git, packed by git gc as
// Hermes' prune leaves it) of 20 projects x 20 commits, each project a
// different GOROOT/src subtree, each commit editing three files (every
// fifth also adding and deleting one). It reports the import's wall time
// and the du-style (allocated) sizes of the resulting casckpt store and of
// the git store.
func BenchmarkMigrate(b *testing.B) {
	skipShort(b)
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed: the legacy store cannot be built")
	}
	const commits = 20
	checkpoints := filepath.Join(b.TempDir(), "checkpoints")
	g := newGitShadow(b, filepath.Join(checkpoints, "store"))
	if err := os.MkdirAll(filepath.Join(g.store, "projects"), 0o755); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(20, 20))
	work := b.TempDir()
	for i, sub := range migrateSubtrees {
		wd := filepath.Join(work, fmt.Sprintf("project%02d", i))
		copyTree(b, filepath.Join(goroot(b), "src", filepath.FromSlash(sub)), wd)
		meta := fmt.Sprintf(`{"workdir": %q, "created_at": 1700000000, "last_touch": 1700000000}`, wd)
		if err := os.WriteFile(filepath.Join(g.store, "projects", projectHash(wd)+".json"), []byte(meta), 0o644); err != nil {
			b.Fatal(err)
		}
		for c := range commits {
			if c > 0 {
				turnEdit(b, rng, wd, c)
			}
			if !g.Snapshot(wd, fmt.Sprintf("checkpoint %d", c), 0) {
				b.Fatalf("%s: commit %d recorded nothing", sub, c)
			}
		}
	}
	g.collect()
	gitBytes, _ := duBytes(g.store)
	want := len(migrateSubtrees) * commits

	var elapsed time.Duration
	var storeBytes int64
	for b.Loop() {
		b.StopTimer()
		store, err := casckpt.Open(filepath.Join(b.TempDir(), "store"), casckpt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rep, err := hermes.Run(context.Background(), store, checkpoints, gitimport.Options{})
		elapsed = time.Since(start)
		b.StopTimer()
		if err != nil || rep.SnapshotsImported != want || rep.Projects != len(migrateSubtrees) || len(rep.Errors) != 0 {
			b.Fatalf("migrate: %+v %v", rep, err)
		}
		storeBytes, _ = duBytes(store.Location())
		b.StartTimer()
	}
	b.ReportMetric(elapsed.Seconds(), "import-s")
	b.ReportMetric(float64(storeBytes), "casckpt-du-bytes")
	b.ReportMetric(float64(gitBytes), "git-du-bytes")
}
