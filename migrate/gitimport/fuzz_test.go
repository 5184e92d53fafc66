package gitimport

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
)

// fuzzHello is the one blob every fuzzed store holds besides the fuzzed
// objects; fuzzLiar is the name under which the fuzzed tree is also
// stored, which its content never hashes to.
var (
	fuzzHello = []byte("hello\n")
	fuzzLiar  = strings.Repeat("ab", 20)
)

// fuzzOptions keep an iteration fast: a few files, small ones.
var fuzzOptions = Options{MaxFiles: 64, MaxFileSize: 4 << 10}

// migrateFuzzed writes a repository of three projects and imports it: a
// project whose commit names tree root, stored under its true name; one
// whose commit names the same content stored under fuzzLiar; and, if
// commitBody is not nil, one whose reference names a commit holding
// commitBody. The store also holds the blob fuzzHello and second, as a blob and
// as a tree, under their true names.
//
// It checks that Run neither panics nor hangs, reports errors of one line,
// accounts for every commit, never imports the liar, and leaves a store
// that verifies.
func migrateFuzzed(t *testing.T, root, second, commitBody []byte) {
	r := newRawStore(t)
	base := t.TempDir()
	r.Put("blob", fuzzHello)
	r.Put("blob", second)
	r.Put("tree", second)
	trueWd, liarWd := filepath.Join(base, "true"), filepath.Join(base, "liar")
	r.project("true", trueWd, r.Put("tree", root))
	r.project("liar", liarWd, r.PutAs(fuzzLiar, "tree", root))
	if commitBody != nil {
		r.ref("commit", filepath.Join(base, "commit"), r.Put("commit", commitBody))
	}

	store, err := casckpt.Open(filepath.Join(t.TempDir(), "store"), casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := Run(ctx, store, r, fuzzOptions)
	if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error of more than one line: %q", err)
	}
	for _, e := range rep.Errors {
		if strings.ContainsAny(e, "\r\n") {
			t.Errorf("error of more than one line: %q", e)
		}
	}
	for _, s := range rep.Sources {
		for _, p := range s.Projects {
			if p.Imported+p.Skipped+p.Failed != p.Commits {
				t.Errorf("project %s: %d commits, %d imported, %d skipped, %d failed", p.Workdir, p.Commits, p.Imported, p.Skipped, p.Failed)
			}
			if p.Workdir == liarWd && p.Imported != 0 {
				t.Errorf("a tree stored under a name its content does not hash to was imported: %+v", p)
			}
		}
	}
	if list, err := store.List(ctx, liarWd, 0); err == nil && len(list) != 0 {
		t.Errorf("the liar's project holds snapshots: %+v", list)
	}
	v, err := store.Verify(ctx)
	if err != nil || len(v.Damaged) != 0 {
		t.Errorf("verify: %+v %v", v, err)
	}
}

// FuzzMigrateTree imports a fuzzed root tree, which may name the blob
// "hello\n", the fuzzed second object (as a blob or as a tree), and
// fuzzLiar: the same fuzzed tree stored under a name it does not hash to.
func FuzzMigrateTree(f *testing.F) {
	hello := gittest.Name("blob", fuzzHello)
	one := gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: hello})
	f.Add(one, []byte(nil))                                                                                                                     // one file
	f.Add([]byte{}, []byte{})                                                                                                                   // the empty tree
	f.Add(gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: hello}, gittest.Entry{Mode: "40000", Name: "loop", Hash: fuzzLiar}), one) // the liar names itself
	f.Add(one[:len(one)-5], []byte(nil))                                                                                                        // a truncated entry
	f.Add([]byte("100644 f"), []byte(nil))                                                                                                      // an entry cut in its name
	f.Add(bytes.Join([][]byte{gittest.RawEntry("100644", "..", hello), gittest.RawEntry("100644", "a/b", hello),
		gittest.RawEntry("100644", "", hello), gittest.RawEntry("40000", ".git", hello)}, nil), []byte(nil)) // names casckpt cannot hold
	f.Add(gittest.Tree(gittest.Entry{Mode: "160000", Name: "sub", Hash: hello}, gittest.Entry{Mode: "100644", Name: "f", Hash: hello}), []byte(nil)) // a gitlink
	// A subdirectory, a link and an executable that name the second object.
	sub := gittest.Tree(gittest.Entry{Mode: "100644", Name: "g", Hash: hello})
	f.Add(gittest.Tree(gittest.Entry{Mode: "40000", Name: "d", Hash: gittest.Name("tree", sub)}, gittest.Entry{Mode: "120000", Name: "l", Hash: gittest.Name("blob", sub)},
		gittest.Entry{Mode: "100755", Name: "x", Hash: gittest.Name("blob", sub)}), sub)
	// A subdirectory that is a blob, a file that is a tree, two entries of
	// one name, a missing object, an odd mode.
	f.Add(bytes.Join([][]byte{gittest.RawEntry("40000", "a", hello), gittest.RawEntry("100644", "b", gittest.Name("tree", one)),
		gittest.RawEntry("100644", "c", hello), gittest.RawEntry("100644", "c", hello), gittest.RawEntry("100644", "m", strings.Repeat("12", 20)),
		gittest.RawEntry("777", "o", hello)}, nil), one)
	f.Fuzz(func(t *testing.T, root, second []byte) {
		migrateFuzzed(t, root, second, nil)
	})
}

// FuzzMigrateCommit imports a fuzzed commit, whose "tree" line may name
// the valid tree holding "hello\n", and the parents the fuzzed second
// object as a tree or a blob.
func FuzzMigrateCommit(f *testing.F) {
	hello := gittest.Name("blob", fuzzHello)
	one := gittest.Tree(gittest.Entry{Mode: "100644", Name: "f", Hash: hello})
	good := fmt.Sprintf("tree %s\nauthor h <h@x> 1700000000 +0000\ncommitter h <h@x> 1700000000 +0000\n\ncheckpoint\n", gittest.Name("tree", one))
	f.Add([]byte(good))
	f.Add([]byte{})
	f.Add([]byte(good[:30]))
	f.Add([]byte(strings.Replace(good, "\n\n", "\nparent "+fuzzLiar+"\nparent "+gittest.Name("tree", one)+"\n\n", 1)))
	f.Add([]byte(strings.Replace(good, "1700000000 +0000", "-99999999999999999 +9999", 1)))
	f.Add([]byte(strings.Replace(good, "\n\n", "\nencoding iso-8859-1\n\n\xe9t\xe9\n", 1)))
	f.Add([]byte("tree " + strings.Repeat("zz", 20) + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		migrateFuzzed(t, one, one, body)
	})
}
