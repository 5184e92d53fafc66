package casckpt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/internal/testtree"
)

// names mixes ordinary, unicode, spaced, dash-led and control-character
// names, none of them excluded by default.
var names = []string{
	"a", "b.go", "README", "ünïcödé.txt", "with space", "-dash", "new\nline",
	"日本語", "x" + strings.Repeat("y", 200), ".hidden", "tab\there", "q\"uote",
}

type treeGen struct {
	rng *rand.Rand
	dir string
}

func (g *treeGen) randomPath() string {
	depth := g.rng.IntN(3)
	parts := make([]string, 0, depth+1)
	for range depth + 1 {
		parts = append(parts, names[g.rng.IntN(len(names))])
	}
	return filepath.Join(parts...)
}

func (g *treeGen) content() []byte {
	n := g.rng.IntN(3000)
	if g.rng.IntN(10) == 0 {
		n = 300_000 + g.rng.IntN(300_000) // several chunks
	}
	b := make([]byte, n)
	text := g.rng.IntN(2) == 0
	for i := range b {
		if text {
			b[i] = "abc \n"[g.rng.IntN(5)]
		} else {
			b[i] = byte(g.rng.Uint32())
		}
	}
	return b
}

// edit makes one random change: write, delete, chmod, or a link.
func (g *treeGen) edit(t *testing.T) {
	p := filepath.Join(g.dir, g.randomPath())
	// Clear whatever stands in the way of the parent directories.
	for d := filepath.Dir(p); d != g.dir; d = filepath.Dir(d) {
		if st, err := os.Lstat(d); err == nil && !st.IsDir() {
			os.Remove(d)
		}
	}
	os.MkdirAll(filepath.Dir(p), 0o755)
	switch g.rng.IntN(6) {
	case 0, 1:
		os.RemoveAll(p)
		mode := os.FileMode(0o644)
		if g.rng.IntN(3) == 0 {
			mode = 0o755
		}
		if err := os.WriteFile(p, g.content(), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	case 2:
		os.RemoveAll(p)
	case 3:
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			os.Chmod(p, st.Mode()^0o100)
		}
	case 4:
		os.RemoveAll(p)
		targets := []string{"a", "../../outside", "/etc/passwd", "dangling/x", "日本語"}
		os.Symlink(targets[g.rng.IntN(len(targets))], p)
	case 5:
		os.RemoveAll(p)
		os.MkdirAll(p, 0o755)
	}
}

// TestRandomEditsRestoreExactly snapshots a tree after each of many random
// edit rounds, then restores every snapshot in random order and checks the
// tree byte for byte: contents, executable bits, link targets, empty dirs.
func TestRandomEditsRestoreExactly(t *testing.T) {
	rounds, seeds := 12, 4
	if testing.Short() {
		rounds, seeds = 5, 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			g := &treeGen{rng: rand.New(rand.NewPCG(uint64(seed), 99)), dir: t.TempDir()}
			type state struct {
				id   casckpt.Ref
				tree testtree.Tree
			}
			var states []state
			for range rounds {
				for range 1 + g.rng.IntN(6) {
					g.edit(t)
				}
				r, err := s.Snapshot(ctx, g.dir, casckpt.SnapshotOptions{Keep: -1})
				if err != nil {
					t.Fatal(err)
				}
				if r.ID.IsZero() {
					continue // still empty
				}
				states = append(states, state{casckpt.Ref(r.ID.String()), testtree.Read(t, g.dir)})
			}
			for _, i := range g.rng.Perm(len(states)) {
				if _, err := s.Restore(ctx, g.dir, states[i].id, casckpt.RestoreOptions{}); err != nil {
					t.Fatalf("restore %d: %v", i, err)
				}
				if d := testtree.Equal(states[i].tree, testtree.Read(t, g.dir)); d != "" {
					t.Fatalf("restore of state %d: %s", i, d)
				}
			}
			verifyClean(t, s)
		})
	}
}
