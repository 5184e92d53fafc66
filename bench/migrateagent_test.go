//go:build linux

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/cline"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// BenchmarkMigrateCline imports Cline's current store (#29): one shadow
// repository of a 2,000-file project (synthTree), made by git as Cline
// makes it (gittest.Shadow), holding 50 tasks x 20 checkpoints, each
// editing three files. casckpt is migrate --from-agent cline's import,
// into a new store; git is git reading the same commits: every object
// reachable from them, through "git rev-list --objects --all | git
// cat-file --batch". It reports the import's seconds (import-s) and git's
// (git-read-s), and the CPU seconds (user and system) each used
// (import-cpu-s, git-cpu-s): on a shared machine the wall times mostly
// measure the wait for a core.
func BenchmarkMigrateCline(b *testing.B) {
	skipShort(b)
	const tasks, checkpoints = 50, 20
	gs := filepath.Join(b.TempDir(), "globalStorage")
	wd, _ := synthTree(b, 2000)
	g := gittest.NewGit(b)
	repo := g.InitShadow(filepath.Join(gs, cline.ExtensionID, "checkpoints", "12345"), wd, "Cline Checkpoint", "checkpoint@cline.bot")
	rng := rand.New(rand.NewPCG(29, 29))
	for task := range tasks {
		for c := range checkpoints {
			turnEdit(b, rng, wd, task*checkpoints+c)
			repo.Commit(fmt.Sprintf("checkpoint-12345-%d", 1_700_000_000_000+task), "--allow-empty", "--no-verify")
		}
	}
	want := tasks*checkpoints + 1 // and the initial commit
	b.Run("casckpt", func(b *testing.B) {
		var elapsed, cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			store, err := casckpt.Open(filepath.Join(b.TempDir(), "store"), casckpt.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start, cpu0 := time.Now(), cpuTime()
			rep, err := cline.Run(context.Background(), store, gs, gitimport.Options{})
			elapsed, cpu = time.Since(start), cpuTime()-cpu0
			if err != nil || rep.SnapshotsImported != want || len(rep.Errors) != 0 {
				b.Fatalf("migrate: %+v %v", rep, err)
			}
		}
		b.ReportMetric(elapsed.Seconds(), "import-s")
		b.ReportMetric(cpu.Seconds(), "import-cpu-s")
	})
	b.Run("git", func(b *testing.B) {
		var elapsed, cpu time.Duration
		for b.Loop() {
			start := time.Now()
			cmd := exec.Command("sh", "-c", "git rev-list --objects --all | git cat-file --batch >/dev/null")
			cmd.Env = []string{"GIT_DIR=" + filepath.Join(repo.Dir, ".git"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=/usr/bin:/bin:/usr/local/bin"}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git: %v %s", err, out)
			}
			// The shell's usage includes the git processes it waited for.
			elapsed, cpu = time.Since(start), cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()
		}
		b.ReportMetric(elapsed.Seconds(), "git-read-s")
		b.ReportMetric(cpu.Seconds(), "git-cpu-s")
	})
}
