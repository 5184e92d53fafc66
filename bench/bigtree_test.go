//go:build linux

package bench

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkCmdW9: W9, a big tree. For each N of CASCKPT_W9_FILES (default
// 10000,100000; #30 asks for 1000000 too), a synthetic tree of N files
// (see synthTree) snapshotted through the command: W9-first, the first
// snapshot into a new store (peak RSS target <= 128 MiB at 100,000 files,
// <= 256 MiB at 1,000,000); W9-nochange, a re-snapshot of the unchanged
// tree, against the stat walk of the same round (floor-statwalk; target
// <= 1.0x). Values: statcache-B-per-file, the pages the stat cache
// holds in the database (bbolt's bucket statistics, allocated) per file,
// target <= 64, and -inuse, the bytes of those pages in use.
func BenchmarkCmdW9(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	ns := envInts("CASCKPT_W9_FILES", 10000, 100000)
	var all []*samples
	for _, n := range ns {
		b.Run(fmt.Sprint("files=", n), func(b *testing.B) {
			start := time.Now()
			tree, bytes := synthTree(b, n)
			b.Logf("tree of %d files, %.0f MiB, written in %s", n, float64(bytes)/(1<<20), time.Since(start).Round(time.Millisecond))
			settle()
			s := newSamples()
			for range reps() {
				w9Round(b, s, tree, n)
			}
			s.report(b)
			all = append(all, s)
		})
	}
	if len(all) == len(ns) {
		printSlope("files", ns, all, "casckpt-cmd")
	}
}

// w9Round takes the first snapshot of tree into a new store and a
// no-change one, and walks the tree, as one round.
func w9Round(b *testing.B, s *samples, tree string, files int) {
	var m procMeter
	home := b.TempDir()
	store := filepath.Join(b.TempDir(), "store")
	p := &hostPeer{name: "casckpt-cmd", procs: &m}
	snapshot := func() {
		runMetered(b, &m, home, "--store", store, "snapshot", tree, "--max-files", "10000000", "--max-size-mb", "0")
	}
	s.add("W9-first", p.name, measure(p, snapshot))
	alloc, _ := duBytes(store)
	s.value("W9-store-MiB-du", p.name, float64(alloc)/(1<<20))
	s.add("W9-nochange", p.name, measure(p, snapshot))
	s.add("W9-nochange", "floor-statwalk", measure(floorPeer("statwalk"), func() { statWalk(tree) }))
	allocB, inuseB := statCacheBytes(b, filepath.Join(store, "casckpt.db"))
	s.value("W9-statcache-B-per-file", p.name, float64(allocB)/float64(files))
	s.value("W9-statcache-B-per-file-inuse", p.name, float64(inuseB)/float64(files))
	if err := os.RemoveAll(store); err != nil {
		b.Fatal(err)
	}
}

// statCacheBytes returns the bytes of the database pages that hold the
// stat cache of every project (allocated, and in use), from bbolt's bucket
// statistics, read-only.
func statCacheBytes(b *testing.B, db string) (alloc, inuse int64) {
	d, err := bolt.Open(db, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	err = d.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("statcache"))
		if bk == nil {
			return fmt.Errorf("no statcache bucket in %s: has the layout changed?", db)
		}
		st := bk.Stats()
		alloc = int64(st.BranchAlloc + st.LeafAlloc)
		inuse = int64(st.BranchInuse + st.LeafInuse + st.InlineBucketInuse)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return alloc, inuse
}

// synthTree writes a synthetic project of n files and returns it and the
// bytes written: sizes log-normal around a median of 8 KiB (sigma 1, from
// 64 B to 1 MiB), in directories n/16 in number nested up to 7 deep (each
// under a random earlier one), the content Go source from GOROOT/src cut
// at random places, each file with a line of its own.
func synthTree(b *testing.B, n int) (string, int64) {
	root := filepath.Join(b.TempDir(), "tree")
	rng := rand.New(rand.NewPCG(9, uint64(n)))
	corpus := goCorpus(b, 16<<20)
	dirs, depth := []string{root}, []int{0}
	for i := 1; i < max(1, n/16); i++ {
		parent := rng.IntN(len(dirs))
		for depth[parent] >= 7 {
			parent = rng.IntN(len(dirs))
		}
		dirs = append(dirs, filepath.Join(dirs[parent], fmt.Sprint("d", i)))
		depth = append(depth, depth[parent]+1)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	var total int64
	for i := range n {
		size := int(math.Exp(math.Log(8192) + rng.NormFloat64()))
		size = min(max(size, 64), 1<<20, len(corpus)/2)
		off := rng.IntN(len(corpus) - size)
		text := append(fmt.Appendf(nil, "// file %d\n", i), corpus[off:off+size]...)
		if err := os.WriteFile(filepath.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("f%d.go", i)), text, 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(len(text))
	}
	return root, total
}

// goCorpus returns up to limit bytes of GOROOT/src's Go files.
func goCorpus(b *testing.B, limit int) []byte {
	var corpus []byte
	filepath.WalkDir(filepath.Join(goroot(b), "src"), func(p string, d fs.DirEntry, err error) error {
		if len(corpus) >= limit {
			return fs.SkipAll
		}
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.Contains(p, "testdata") {
			data, err := os.ReadFile(p)
			if err == nil {
				corpus = append(corpus, data...)
			}
		}
		return nil
	})
	if len(corpus) < 4<<20 {
		b.Fatalf("only %d bytes of Go source in GOROOT/src", len(corpus))
	}
	return corpus
}
