package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate"
)

// BenchmarkMigrate imports a shared Hermes store of 20 projects x 20
// commits, each project a different GOROOT/src subtree.
func BenchmarkMigrate(b *testing.B) {
	skipShort(b)
	subtrees := []string{"compress", "debug", "encoding", "go/types", "html", "image", "io", "log", "math", "net/http",
		"os", "sync", "syscall", "testing", "time", "cmd/compile/internal/ssa", "cmd/link/internal/ld", "cmd/internal/obj",
		"crypto/tls", "internal/trace"}
	checkpoints := filepath.Join(b.TempDir(), "checkpoints")
	g := newGitShadow(b, filepath.Join(checkpoints, "store"))
	os.MkdirAll(filepath.Join(g.store, "projects"), 0o755)
	rng := rand.New(rand.NewPCG(20, 20))
	for i, sub := range subtrees {
		wd := filepath.Join(b.TempDir(), fmt.Sprintf("project%02d", i))
		copyTree(b, filepath.Join(goroot(b), "src", sub), wd)
		meta := fmt.Sprintf(`{"workdir": %q, "created_at": 1700000000, "last_touch": 1700000000}`, wd)
		os.WriteFile(filepath.Join(g.store, "projects", projectHash(wd)+".json"), []byte(meta), 0o644)
		for c := range 20 {
			if c > 0 {
				turnEdit(b, rng, wd, c)
			}
			g.Snapshot(wd, fmt.Sprintf("checkpoint %d", c), 0)
		}
	}
	g.collect()
	gitBytes, _ := duBytes(g.store)
	for b.Loop() {
		b.StopTimer()
		store, err := casckpt.Open(filepath.Join(b.TempDir(), "store"), casckpt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := migrate.Run(context.Background(), store, checkpoints, migrate.Options{})
		b.StopTimer()
		if err != nil || rep.SnapshotsImported != 400 || len(rep.Errors) != 0 {
			b.Fatalf("migrate: %+v %v", rep, err)
		}
		casckptBytes, _ := duBytes(store.Dir())
		b.ReportMetric(float64(casckptBytes)/(1<<20), "casckpt-MiB-du")
		b.ReportMetric(float64(gitBytes)/(1<<20), "git-MiB-du")
		b.StartTimer()
	}
}
