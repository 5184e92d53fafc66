package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
