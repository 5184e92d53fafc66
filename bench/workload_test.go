//go:build linux

package bench

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// duBytes returns the allocated (as du -sk counts) and apparent sizes of
// every file under dir.
func duBytes(dir string) (allocated, apparent int64) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		apparent += info.Size()
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			allocated += st.Blocks * 512
		}
		return nil
	})
	return allocated, apparent
}

// copyTree copies src to dst: files with their executable bit, links as
// links, directories.
func copyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm()|0o200)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, in)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return err
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// goroot is the Go installation whose sources are the workloads' trees.
func goroot(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// settle waits out the racily-clean window, so that a freshly copied tree
// is seen as it would be in use: files edited seconds, not milliseconds, ago.
func settle() { time.Sleep(2100 * time.Millisecond) }

// w1Tree copies GOROOT/src.
func w1Tree(tb testing.TB) string {
	dst := filepath.Join(tb.TempDir(), "src")
	copyTree(tb, filepath.Join(goroot(tb), "src"), dst)
	return dst
}

// w3Project puts GOROOT's src/net and src/crypto side by side (~1.6k files).
func w3Project(tb testing.TB) string {
	dst := filepath.Join(tb.TempDir(), "project")
	for _, sub := range []string{"net", "crypto"} {
		copyTree(tb, filepath.Join(goroot(tb), "src", sub), filepath.Join(dst, sub))
	}
	return dst
}

// sourceFiles lists the .go files of a tree, sorted.
func sourceFiles(tb testing.TB, dir string) []string {
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	if len(files) < 10 {
		tb.Fatalf("%s has only %d source files", dir, len(files))
	}
	return files
}

// turnEdit is one agent turn of W3: three source files edited (lines
// appended, a line in the middle changed); every fifth turn one file added
// and one deleted.
func turnEdit(tb testing.TB, rng *rand.Rand, dir string, turn int) {
	tb.Helper()
	files := sourceFiles(tb, dir)
	for i := range 3 {
		p := files[rng.IntN(len(files))]
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		lines[len(lines)/2] = fmt.Sprintf("// turn %d edit %d: changed", turn, i)
		lines = append(lines, fmt.Sprintf("// turn %d edit %d: appended", turn, i), "")
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if turn%5 == 4 {
		victim := files[rng.IntN(len(files))]
		os.Remove(victim)
		add := filepath.Join(filepath.Dir(files[rng.IntN(len(files))]), fmt.Sprintf("added_turn%d.go", turn))
		os.WriteFile(add, []byte(fmt.Sprintf("package x\n\n// added in turn %d\nfunc f%d() {}\n", turn, turn)), 0o644)
	}
}

// randomBytes returns n bytes from rng.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// w7Project writes a small project: 40 source files and a 48 KiB random file.
func w7Project(tb testing.TB, rng *rand.Rand, dir string, p int) {
	tb.Helper()
	os.MkdirAll(dir, 0o755)
	for i := range 40 {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\n", p)
		for j := range 30 + rng.IntN(60) {
			fmt.Fprintf(&b, "func F%d_%d(x int) int { return x*%d + %d }\n", i, j, rng.IntN(1000), j)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", i)), []byte(b.String()), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "blob.bin"), randomBytes(rng, 48<<10), 0o644)
}

// w7Evolve edits two source files and rewrites the random file.
func w7Evolve(tb testing.TB, rng *rand.Rand, dir string, round int) {
	tb.Helper()
	for range 2 {
		p := filepath.Join(dir, fmt.Sprintf("f%02d.go", rng.IntN(40)))
		b, _ := os.ReadFile(p)
		b = append(b, fmt.Sprintf("// round %d\nfunc G%d() {}\n", round, rng.IntN(1e9))...)
		os.WriteFile(p, b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "blob.bin"), randomBytes(rng, 48<<10), 0o644)
}

// statWalk lstats every path under dir: the floor of a no-change check.
func statWalk(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			if _, err := os.Lstat(p); err == nil {
				n++
			}
		}
		return nil
	})
	return n
}

// median and percentile of durations.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
