package migrate

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// rawStore writes a shared Hermes store object by object, as zlib-compressed
// loose objects, with no git program: so that it can hold what git would
// never write.
type rawStore struct {
	t   *testing.T
	dir string // the git directory
}

func newRawStore(t *testing.T, checkpoints string) *rawStore {
	t.Helper()
	dir := filepath.Join(checkpoints, "store")
	for _, d := range []string{"objects", "refs/hermes", "projects"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/master\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &rawStore{t: t, dir: dir}
}

// put writes an object of type typ under its true name.
func (r *rawStore) put(typ string, content []byte) string {
	sum := sha1.Sum(append([]byte(fmt.Sprintf("%s %d\x00", typ, len(content))), content...))
	return r.putAs(hex.EncodeToString(sum[:]), typ, content)
}

// putAs writes an object of type typ under any name.
func (r *rawStore) putAs(name, typ string, content []byte) string {
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	fmt.Fprintf(zw, "%s %d\x00", typ, len(content))
	zw.Write(content)
	zw.Close()
	p := filepath.Join(r.dir, "objects", name[:2], name[2:])
	must(os.MkdirAll(filepath.Dir(p), 0o755))
	must(os.WriteFile(p, b.Bytes(), 0o444))
	return name
}

// rawEntry is a tree entry: mode (git's octal text), name and object name.
type rawEntry struct{ mode, name, hash string }

// tree encodes entries as git does (sorted by name; directories compare as
// if their names ended in '/', which the names used here do not need).
func tree(entries ...rawEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var b bytes.Buffer
	for _, e := range entries {
		h, err := hex.DecodeString(e.hash)
		must(err)
		fmt.Fprintf(&b, "%s %s\x00", e.mode, e.name)
		b.Write(h)
	}
	return b.Bytes()
}

// project records workdir with one commit of tree root.
func (r *rawStore) project(key, workdir, root string) {
	c := r.put("commit", []byte(fmt.Sprintf("tree %s\nauthor h <h@x> 1700000000 +0000\ncommitter h <h@x> 1700000000 +0000\n\ncheckpoint of %s\n", root, key)))
	must(os.WriteFile(filepath.Join(r.dir, "refs/hermes", key), []byte(c+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(r.dir, "projects", key+".json"), []byte(fmt.Sprintf(`{"workdir":%q}`, workdir)), 0o644))
}

// A hostile store: a tree that contains itself, a tree bomb, a blob that
// does not match its name and a file over the size limit. Each damaged
// project fails alone with a one-line error; the others are imported; the
// large file is left out unread.
func TestMigrateHostileStore(t *testing.T) {
	checkpoints := t.TempDir()
	r := newRawStore(t, checkpoints)
	base := t.TempDir()
	wd := func(name string) string { return filepath.Join(base, name) }
	small := r.put("blob", []byte("hello\n"))

	// A loose tree whose entry names the tree itself: its content cannot
	// hash to its name, and walking it never ends.
	self := strings.Repeat("ab", 20)
	r.putAs(self, "tree", tree(rawEntry{"100644", "f", small}, rawEntry{"40000", "loop", self}))
	r.project("cycle", wd("cycle"), self)

	// 30 nested trees of two entries each naming the next: 2^30 paths.
	level := r.put("tree", tree(rawEntry{"100644", "f", small}))
	for range 30 {
		level = r.put("tree", tree(rawEntry{"40000", "a", level}, rawEntry{"40000", "b", level}))
	}
	r.project("bomb", wd("bomb"), level)

	// A blob stored under another blob's name.
	liar := r.putAs(strings.Repeat("cd", 20), "blob", []byte("not what its name says\n"))
	r.project("corrupt", wd("corrupt"), r.put("tree", tree(rawEntry{"100644", "f", liar})))

	// A large file whose content does not match its name either: it must
	// be left out without being read.
	big := r.putAs(strings.Repeat("ef", 20), "blob", bytes.Repeat([]byte{'x'}, 2<<20))
	r.project("good", wd("good"), r.put("tree", tree(rawEntry{"100644", "small.txt", small}, rawEntry{"100644", "big.bin", big})))

	store := newStore(t)
	rep, err := Run(context.Background(), store, checkpoints, Options{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsImported != 1 || rep.FilesTooLarge != 1 {
		t.Fatalf("imported %d snapshots, %d files too large; want 1 and 1; errors %q", rep.SnapshotsImported, rep.FilesTooLarge, rep.Errors)
	}
	wantErrs := map[string]string{"cycle": "does not match its hash", "bomb": "more than 50000 files", "corrupt": "does not match its hash"}
	for name, want := range wantErrs {
		found := false
		for _, e := range rep.Errors {
			if strings.Contains(e, wd(name)+":") {
				if found || !strings.Contains(e, want) || strings.Contains(e, "\n") {
					t.Errorf("error of %s: %q, want one line with %q", name, e, want)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no error for %s in %q", name, rep.Errors)
		}
	}
	if len(rep.Errors) != len(wantErrs) {
		t.Errorf("errors: %q", rep.Errors)
	}
	files, _ := snapshotView(t, store, wd("good"), mustOnly(t, store, wd("good")))
	if !mapsEqualEntries(files, map[string]gitEntry{"small.txt": {"file", "hello\n"}}) {
		t.Errorf("good project holds %v", files)
	}
	list, err := store.List(context.Background(), wd("good"), 0)
	if err != nil || list[0].MaxFileSize != 1<<20 {
		t.Errorf("the imported snapshot's size limit: %+v %v", list, err)
	}
}

// TestMigrateWorkdirNotUTF8: Hermes writes a project record with Python's
// json, so a workdir that is not UTF-8 comes as \udcXX (its
// surrogateescape string): the project is imported at the directory with
// those bytes, not at one with U+FFFD in its name.
func TestMigrateWorkdirNotUTF8(t *testing.T) {
	checkpoints := t.TempDir()
	r := newRawStore(t, checkpoints)
	wd := filepath.Join(t.TempDir(), "proj\xffect")
	r.project("k", wd, r.put("tree", tree(rawEntry{"100644", "f", r.put("blob", []byte("x\n"))})))
	record := `{"workdir":"` + strings.ReplaceAll(wd, "\xff", `\udcff`) + `"}`
	must(os.WriteFile(filepath.Join(r.dir, "projects", "k.json"), []byte(record), 0o644))
	store := newStore(t)
	rep, err := Run(context.Background(), store, checkpoints, Options{})
	if err != nil || rep.SnapshotsImported != 1 || len(rep.Errors) != 0 {
		t.Fatalf("migrate: %+v %v", rep, err)
	}
	files, _ := snapshotView(t, store, wd, mustOnly(t, store, wd))
	if !mapsEqualEntries(files, map[string]gitEntry{"f": {"file", "x\n"}}) {
		t.Errorf("%q holds %v", wd, files)
	}
}
