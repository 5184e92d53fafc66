//go:build linux

package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// logFile and logDir are the paths whose history BenchmarkLog asks for:
// a file edited in every third snapshot, and its directory.
const (
	logFile = "net/http/server.go"
	logDir  = "net/http"
)

// logHistory takes 20 snapshots of a copy of GOROOT/src: the first, then
// 19 turns of W3's edits (three random source files, a file added and one
// deleted every fifth turn), logFile appended to every third turn.
func logHistory(b *testing.B) (*casckpt.Store, string) {
	tree := w1Tree(b)
	settle()
	s := openStore(b)
	snap(b, s, tree, casckpt.SnapshotOptions{Reason: "first"})
	rng := rand.New(rand.NewPCG(20, 11))
	for turn := range 19 {
		turnEdit(b, rng, tree, turn)
		if turn%3 == 0 {
			f, err := os.OpenFile(filepath.Join(tree, logFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(f, "// turn %d\n", turn)
			f.Close()
		}
		snap(b, s, tree, casckpt.SnapshotOptions{Reason: fmt.Sprint("turn ", turn)})
	}
	return s, tree
}

// Log: the history of a file and of a directory over 20 snapshots of
// GOROOT/src, in the library and through the command (a process per log),
// with the CPU time each took beside the wall time (this machine is
// shared); floor-cmd is a process that only prints the version.
func BenchmarkLog(b *testing.B) {
	skipShort(b)
	casckptBinary(b) // built before any timing
	s, tree := logHistory(b)
	list, err := s.List(context.Background(), tree, 0)
	if err != nil || len(list) != 20 {
		b.Fatalf("%d snapshots: %v", len(list), err)
	}
	for _, p := range []struct{ name, path string }{{"file", logFile}, {"dir", logDir}} {
		b.Run(p.name, func(b *testing.B) {
			var n int
			start := cpuTime()
			for b.Loop() {
				log, err := s.FileLog(context.Background(), tree, p.path)
				if err != nil || len(log) < 7 {
					b.Fatalf("log of %s: %d entries, %v", p.path, len(log), err)
				}
				n = len(log)
			}
			b.ReportMetric(ms((cpuTime()-start)/time.Duration(b.N)), "cpu-ms/op")
			b.ReportMetric(float64(n), "changes")
		})
		b.Run(p.name+"-cmd", func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				cpu += runBinaryCPU(b, "--store", s.Location(), "log", tree, p.path, "--json")
			}
			b.ReportMetric(ms(cpu/time.Duration(b.N)), "cpu-ms/op")
		})
	}
	b.Run("floor-cmd", func(b *testing.B) {
		var cpu time.Duration
		for b.Loop() {
			cpu += runBinaryCPU(b, "version", "--json")
		}
		b.ReportMetric(ms(cpu/time.Duration(b.N)), "cpu-ms/op")
	})
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runBinaryCPU runs the command as runBinary does and returns the CPU
// time it used.
func runBinaryCPU(b *testing.B, args ...string) time.Duration {
	cmd := exec.Command(casckptBinary(b), args...)
	cmd.Env = []string{"HOME=" + b.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("casckpt %v: %v\n%s", args, err, out)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
