package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/testtree"
)

// TestBinarySnapshotNeverReadsOutsideWhileDirectoriesTurnIntoLinks swaps a
// directory of the project for a link to outside it, again and again, while
// the built binary snapshots the project into a fresh store (so every file
// is read) and exports and cats the snapshot: the outside files' bytes are
// never captured nor printed, whatever each snapshot manages to capture.
// The deterministic tests of this race are in internal/scan and the root
// package; this one checks the command a user runs.
func TestBinarySnapshotNeverReadsOutsideWhileDirectoriesTurnIntoLinks(t *testing.T) {
	base := t.TempDir()
	dir, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
	files := map[string]string{"big.bin": strings.Repeat("b", 1<<20)}
	secrets := map[string]string{}
	for i := range 40 {
		name := fmt.Sprintf("f%02d.txt", i)
		files["d/"+name] = "inside " + name
		secrets[name] = "OUTSIDE-SECRET " + name
	}
	writeFiles(t, dir, files)
	writeFiles(t, outside, secrets)

	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	// Each state lasts long enough to be met.
	defer testtree.FlipToLink(filepath.Join(dir, "d"), outside, time.Millisecond)()
	for i := range rounds {
		b := newBinEnv(t)
		b.ok("snapshot", dir, "-m", fmt.Sprint("round ", i))
		tarPath := filepath.Join(b.home, "snap.tar")
		b.ok("export", dir, "@1", "-o", tarPath)
		exported, err := os.ReadFile(tarPath)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(exported, []byte("OUTSIDE-SECRET")) {
			t.Fatalf("round %d: the snapshot holds a file from outside the project", i)
		}
		for _, name := range []string{"f00.txt", "f39.txt"} {
			if out := b.run("cat", dir, "@1", "d/"+name).out; strings.Contains(out, "OUTSIDE-SECRET") {
				t.Fatalf("round %d: cat d/%s printed a file from outside the project: %q", i, name, out)
			}
		}
	}
}
