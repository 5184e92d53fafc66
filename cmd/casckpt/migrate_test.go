package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/manifest"
)

// hermesStore builds a small shared Hermes store with the git program: one
// project, two checkpoints. It returns the checkpoints directory.
func hermesStore(t *testing.T, home string) (checkpoints, workdir string) {
	t.Helper()
	return hermesStoreAt(t, home, filepath.Join(home, "proj"), "")
}

// hermesStoreAt is hermesStore for the project workdir, its commits made
// at date (git's default, now, if empty), a minute apart.
func hermesStoreAt(t *testing.T, home, workdir, date string) (checkpoints, _ string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to build a legacy store")
	}
	checkpoints = filepath.Join(home, ".hermes", "checkpoints")
	store := filepath.Join(checkpoints, "store")
	sum := sha256.Sum256([]byte(workdir))
	hash := hex.EncodeToString(sum[:])[:16]
	var dateEnv []string
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Env = append(slices.Clone(dateEnv), "GIT_DIR="+store, "GIT_WORK_TREE="+workdir, "GIT_INDEX_FILE="+filepath.Join(store, "index-"+hash),
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=h", "GIT_AUTHOR_EMAIL=h@x",
			"GIT_COMMITTER_NAME=h", "GIT_COMMITTER_EMAIL=h@x", "PATH="+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	os.MkdirAll(workdir, 0o755)
	if out, err := exec.Command("git", "init", "--bare", "-q", store).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	os.MkdirAll(filepath.Join(store, "projects"), 0o755)
	os.WriteFile(filepath.Join(store, "projects", hash+".json"), []byte(fmt.Sprintf(`{"workdir":%q,"created_at":1,"last_touch":2}`, workdir)), 0o644)
	parent := ""
	for i, text := range []string{"v1\n", "v2\n"} {
		if date != "" {
			at := fmt.Sprintf("%s:%02d +0000", date, i)
			dateEnv = []string{"GIT_AUTHOR_DATE=" + at, "GIT_COMMITTER_DATE=" + at}
		}
		os.WriteFile(filepath.Join(workdir, "f.txt"), []byte(text), 0o644)
		git("add", "-A")
		args := []string{"commit-tree", git("write-tree"), "-m", fmt.Sprintf("checkpoint %d", i+1)}
		if parent != "" {
			args = append(args, "-p", parent)
		}
		parent = git(args...)
		git("update-ref", "refs/hermes/"+hash, parent)
	}
	return checkpoints, workdir
}

func TestMigrateStatusClearLegacy(t *testing.T) {
	e := newEnv(t)
	checkpoints, workdir := hermesStore(t, e.vars["HOME"])
	// The command's environment has no PATH: git cannot be run.
	st := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	legacy := st["legacy"].([]any)
	if len(legacy) != 1 {
		t.Fatalf("legacy stores found: %v", legacy)
	}
	l := legacy[0].(map[string]any)
	if !slices.Equal(keys(l), []string{"migrated", "path", "size_bytes"}) || l["migrated"] != false || l["size_bytes"].(float64) <= 0 {
		t.Fatalf("legacy entry before migrating: %v", l)
	}
	failsWith(t, e.run("clear-legacy"), 1, "--yes")
	cl := jsonOf[map[string]any](t, e.run("clear-legacy", "--yes", "--json").out)
	if len(cl["kept"].([]any)) != 1 || len(cl["deleted"].([]any)) != 0 {
		t.Fatalf("clear-legacy before migrating: %v", cl)
	}
	if r := e.run("clear-legacy", "--yes"); r.code != 1 {
		t.Fatalf("clear-legacy keeping a store exits %d", r.code)
	}

	m := jsonOf[map[string]any](t, e.ok("migrate", "--json").out)
	if !slices.Equal(keys(m), []string{"errors", "projects", "snapshots_imported", "snapshots_skipped"}) ||
		m["projects"] != 1.0 || m["snapshots_imported"] != 2.0 || len(m["errors"].([]any)) != 0 {
		t.Fatalf("migrate: %v", m)
	}
	if again := jsonOf[map[string]any](t, e.ok("migrate", "--from", checkpoints, "--json").out); again["snapshots_imported"] != 0.0 || again["snapshots_skipped"] != 2.0 {
		t.Fatalf("second migrate: %v", again)
	}
	// A lost database, repaired from the packs, still knows what was
	// imported: the imported snapshots are back and nothing is imported
	// twice.
	must(t, os.Remove(filepath.Join(e.store, "casckpt.db")))
	e.ok("repair")
	if again := jsonOf[map[string]any](t, e.ok("migrate", "--json").out); again["snapshots_imported"] != 0.0 || again["snapshots_skipped"] != 2.0 {
		t.Fatalf("migrate after a repair: %v", again)
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", workdir, "--json").out)
	if len(list) != 2 || list[0]["reason"] != "checkpoint 2" {
		t.Fatalf("imported snapshots: %v", list)
	}
	if out := e.ok("cat", workdir, "@2", "f.txt").out; out != "v1\n" {
		t.Fatalf("oldest imported snapshot holds %q", out)
	}
	st = jsonOf[map[string]any](t, e.ok("status", "--json").out)
	if st["legacy"].([]any)[0].(map[string]any)["migrated"] != true {
		t.Fatalf("after migrating: %v", st["legacy"])
	}
	cl = jsonOf[map[string]any](t, e.ok("clear-legacy", "--yes", "--json").out)
	if len(cl["deleted"].([]any)) != 1 || cl["bytes_freed"].(float64) <= 0 {
		t.Fatalf("clear-legacy after migrating: %v", cl)
	}
	if _, err := os.Stat(filepath.Join(checkpoints, "store")); !os.IsNotExist(err) {
		t.Fatal("the imported legacy store is still there")
	}
}

// Snapshots imported into a project that has newer ones are listed by
// their time: @1 stays the newest, and --keep drops the old imports first.
func TestMigrateOlderHistoryIntoProject(t *testing.T) {
	e := newEnv(t)
	workdir := filepath.Join(e.vars["HOME"], "proj")
	writeFiles(t, workdir, map[string]string{"f.txt": "today 1\n"})
	e.vars["CASCKPT_NOW"] = "2026-06-01T10:00:00Z"
	e.ok("snapshot", workdir, "-m", "today 1")
	writeFiles(t, workdir, map[string]string{"f.txt": "today 2\n"})
	e.vars["CASCKPT_NOW"] = "2026-06-01T10:05:00Z"
	e.ok("snapshot", workdir, "-m", "today 2")
	hermesStoreAt(t, e.vars["HOME"], workdir, "2025-06-01T10:00")
	writeFiles(t, workdir, map[string]string{"f.txt": "today 2\n"}) // the store's builder wrote v2
	if m := jsonOf[map[string]any](t, e.ok("migrate", "--json").out); m["snapshots_imported"] != 2.0 {
		t.Fatalf("migrate: %v", m)
	}
	reasons := func() []string {
		var out []string
		for _, s := range jsonOf[[]map[string]any](t, e.ok("list", workdir, "--json").out) {
			out = append(out, s["reason"].(string))
		}
		return out
	}
	if got, want := reasons(), []string{"today 2", "today 1", "checkpoint 2", "checkpoint 1"}; !slices.Equal(got, want) {
		t.Fatalf("list after migrating an older history: %q, want %q", got, want)
	}
	if out := e.ok("cat", workdir, "@1", "f.txt").out; out != "today 2\n" {
		t.Fatalf("@1 holds %q", out)
	}
	writeFiles(t, workdir, map[string]string{"f.txt": "today 3\n"})
	e.vars["CASCKPT_NOW"] = "2026-06-01T10:10:00Z"
	e.ok("snapshot", workdir, "-m", "today 3", "--keep", "2")
	if got, want := reasons(), []string{"today 3", "today 2"}; !slices.Equal(got, want) {
		t.Fatalf("after snapshot --keep 2: %q, want %q", got, want)
	}
}

// looseObject writes a git object as a zlib-compressed loose object under
// gitDir and returns its name.
func looseObject(t *testing.T, gitDir, typ string, content []byte) string {
	t.Helper()
	raw := append([]byte(fmt.Sprintf("%s %d\x00", typ, len(content))), content...)
	sum := sha1.Sum(raw)
	name := hex.EncodeToString(sum[:])
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	p := filepath.Join(gitDir, "objects", name[:2], name[2:])
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, b.Bytes(), 0o444))
	return name
}

// A legacy store holding a tree bomb (30 nested trees of two entries each,
// 2^30 paths) and a sound project: the bomb's project fails with a one-line
// error in the JSON, the other is imported.
func TestMigrateTreeBomb(t *testing.T) {
	e := newEnv(t)
	store := filepath.Join(e.vars["HOME"], ".hermes", "checkpoints", "store")
	for _, d := range []string{"refs/hermes", "projects"} {
		must(t, os.MkdirAll(filepath.Join(store, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(store, "HEAD"), []byte("ref: refs/heads/master\n"), 0o644))
	entry := func(mode, name, hash string) []byte {
		h, _ := hex.DecodeString(hash)
		return append([]byte(mode+" "+name+"\x00"), h...)
	}
	blob := looseObject(t, store, "blob", []byte("hello\n"))
	project := func(key, workdir, root string) {
		c := looseObject(t, store, "commit", []byte("tree "+root+"\nauthor h <h@x> 1700000000 +0000\ncommitter h <h@x> 1700000000 +0000\n\n"+key+"\n"))
		must(t, os.WriteFile(filepath.Join(store, "refs/hermes", key), []byte(c+"\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(store, "projects", key+".json"), []byte(fmt.Sprintf(`{"workdir":%q}`, workdir)), 0o644))
	}
	level := looseObject(t, store, "tree", entry("100644", "f", blob))
	for range 30 {
		level = looseObject(t, store, "tree", append(entry("40000", "a", level), entry("40000", "b", level)...))
	}
	bombDir, goodDir := filepath.Join(e.vars["HOME"], "bomb"), filepath.Join(e.vars["HOME"], "good")
	project("bomb", bombDir, level)
	project("good", goodDir, looseObject(t, store, "tree", entry("100644", "f.txt", blob)))

	r := e.run("migrate", "--json")
	if r.code != 0 {
		t.Fatalf("migrate: exit %d, %s", r.code, r.err)
	}
	m := jsonOf[map[string]any](t, r.out)
	errs := m["errors"].([]any)
	if m["snapshots_imported"] != 1.0 || m["projects"] != 1.0 || len(errs) != 1 ||
		!strings.Contains(errs[0].(string), bombDir) || !strings.Contains(errs[0].(string), "more than 50000 files") {
		t.Fatalf("migrate: %v", m)
	}
	if out := e.ok("cat", goodDir, "@1", "f.txt").out; out != "hello\n" {
		t.Fatalf("the sound project's file holds %q", out)
	}
}

// A stored snapshot whose tree names one subtree at 2^30 paths: list marks
// it damaged, ls, export and restore --dry-run fail with one line, and
// none of them grows without bound.
func TestImportedTreeBomb(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.vars["HOME"], "proj")
	writeFiles(t, dir, map[string]string{"f.txt": "x\n"})
	e.ok("snapshot", dir)
	s, err := casckpt.Open(e.store, casckpt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = s.Import(ctx, casckpt.ImportProject{Workdir: dir, Snapshots: []casckpt.ImportSnapshot{{Origin: "bomb", Time: time.Now().Add(time.Hour),
		Build: func(ctx context.Context, put cas.Putter) (cas.ID, int64, int64, error) {
			f, err := manifest.PutFile(ctx, put, "f", strings.NewReader("x\n"), 2, false)
			if err != nil {
				return cas.ID{}, 0, 0, err
			}
			id, err := manifest.Put(ctx, put, manifest.Tree{Entries: []manifest.Entry{f}})
			for range 30 {
				if err != nil {
					break
				}
				id, err = manifest.Put(ctx, put, manifest.Tree{Entries: []manifest.Entry{{Name: "a", Kind: manifest.KindDir, Tree: id}, {Name: "b", Kind: manifest.KindDir, Tree: id}}})
			}
			return id, 1, 2, err
		}}}})
	must(t, err)

	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 2 || list[0]["damaged"] != true {
		t.Fatalf("list: %v", list)
	}
	for _, args := range [][]string{{"ls", dir, "@1"}, {"export", dir, "@1", "-o", filepath.Join(t.TempDir(), "x.tar")}, {"restore", dir, "@1", "--dry-run"}} {
		failsWith(t, e.run(args...), 1, "more than 500000 entries")
	}
	e.ok("ls", dir, "@2")
}
