package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// env is a test process environment: a private HOME and store.
type env struct {
	t     *testing.T
	vars  map[string]string
	store string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	return &env{t: t, vars: map[string]string{"HOME": home, "CASCKPT_HOME": filepath.Join(home, "store")}, store: filepath.Join(home, "store")}
}

// filePacks makes every snapshot write its data to pack files, none
// inline in the database (CASCKPT_FILE_PACKS=1): for tests that damage or
// count pack files, or lose the database. It returns e.
func (e *env) filePacks() *env {
	e.vars["CASCKPT_FILE_PACKS"] = "1"
	return e
}

type result struct {
	code     int
	out, err string
}

// run runs the command in-process.
func (e *env) run(args ...string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, func(k string) string { return e.vars[k] })
	return result{code, out.String(), errb.String()}
}

// ok runs a command that must succeed.
func (e *env) ok(args ...string) result {
	e.t.Helper()
	r := e.run(args...)
	if r.code != 0 {
		e.t.Fatalf("casckpt %q: exit %d, stderr %q", args, r.code, r.err)
	}
	return r
}

// jsonOf decodes exactly one JSON document from out.
func jsonOf[T any](t *testing.T, out string) T {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var v T
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if dec.More() || strings.TrimSpace(out[dec.InputOffset():]) != "" {
		t.Fatalf("stdout holds more than one JSON document:\n%s", out)
	}
	return v
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// failsWith checks exit status 1 (or 2) with a single casckpt: line.
func failsWith(t *testing.T, r result, code int, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.err, "\n"), "\n")
	if r.code != code || len(lines) != 1 || !strings.HasPrefix(lines[0], "casckpt: ") || !strings.Contains(lines[0], want) {
		t.Fatalf("want exit %d with one 'casckpt: ...%s' line; got exit %d, stderr %q", code, want, r.code, r.err)
	}
}

func TestSnapshotJSONAndUnchanged(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	empty := e.ok("snapshot", dir, "--json")
	doc := jsonOf[map[string]any](t, empty.out)
	if doc["created"] != false || doc["id"] != nil {
		t.Fatalf("empty tree: %v", doc)
	}
	writeFiles(t, dir, map[string]string{"a.go": "package a\n", "sub/b.txt": "b"})
	// Flags after the positional argument.
	first := jsonOf[map[string]any](t, e.ok("snapshot", dir, "-m", "before patch", "--json").out)
	if want := []string{"bytes", "created", "excluded_by_default", "files", "id", "project", "session", "turn", "unreadable"}; !slices.Equal(keys(first), want) {
		t.Fatalf("snapshot JSON keys %v, want %v", keys(first), want)
	}
	if first["created"] != true || first["files"] != 2.0 || first["bytes"] != 11.0 {
		t.Fatalf("first snapshot: %v", first)
	}
	again := jsonOf[map[string]any](t, e.ok("--json", "snapshot", dir).out)
	if again["created"] != false || again["id"] != first["id"] {
		t.Fatalf("unchanged tree: %v", again)
	}
	if st, err := os.Stat(e.store); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("store mode: %v %v", st, err)
	}
}

func TestStoreLocationOrder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "x"})
	home := t.TempDir()
	for _, c := range []struct {
		vars  map[string]string
		flag  []string
		where string
	}{
		{map[string]string{"HOME": home}, nil, filepath.Join(home, ".local/share/casckpt")},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "xdg")}, nil, filepath.Join(home, "xdg/casckpt")},
		{map[string]string{"HOME": home, "XDG_DATA_HOME": filepath.Join(home, "xdg"), "CASCKPT_HOME": filepath.Join(home, "ch")}, nil, filepath.Join(home, "ch")},
		{map[string]string{"HOME": home, "CASCKPT_HOME": filepath.Join(home, "ch")}, []string{"--store", filepath.Join(home, "flag")}, filepath.Join(home, "flag")},
	} {
		e := &env{t: t, vars: c.vars}
		e.ok(append([]string{"snapshot", dir}, c.flag...)...)
		if _, err := os.Stat(filepath.Join(c.where, "casckpt.db")); err != nil {
			t.Errorf("store not at %s: %v", c.where, err)
		}
	}
}

func TestReadOnlyCommandsOnMissingStore(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	if out := e.ok("list", dir, "--json").out; strings.TrimSpace(out) != "[]" {
		t.Fatalf("list of an empty store: %q", out)
	}
	st := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	if want := []string{"damaged_objects", "home", "hook_misses", "legacy", "projects", "size_bytes", "store"}; !slices.Equal(keys(st), want) {
		t.Fatalf("status keys %v", keys(st))
	}
	v := jsonOf[map[string]any](t, e.ok("verify", "--json").out)
	if want := []string{"damaged", "damaged_objects", "objects_checked", "rejected", "snapshots_checked"}; !slices.Equal(keys(v), want) {
		t.Fatalf("verify keys %v", keys(v))
	}
	e.ok("gc", "--json")
	failsWith(t, e.run("diff", dir, "@1"), 1, "@1")
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatal("a read-only command created the store")
	}
}

func TestUsageAndRefusals(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "1", "b": "2", "c": "3"})
	failsWith(t, e.run("frobnicate"), 2, "unknown command")
	failsWith(t, e.run("list", "--frob"), 2, "unknown flag")
	failsWith(t, e.run("cat", dir), 2, "")
	failsWith(t, e.run("snapshot", dir, "--keep", "0"), 2, "--keep")
	e.vars["CASCKPT_NOW"] = "yesterday"
	failsWith(t, e.run("list", dir), 2, "CASCKPT_NOW")
	delete(e.vars, "CASCKPT_NOW")
	failsWith(t, e.run("snapshot", filepath.Join(dir, "missing")), 1, "missing")
	failsWith(t, e.run("snapshot", filepath.Join(dir, "a")), 1, "not a directory")
	failsWith(t, e.run("snapshot", "/"), 1, "root directory")
	failsWith(t, e.run("snapshot", e.vars["HOME"]), 1, "home directory")
	failsWith(t, e.run("snapshot", dir, "--max-files", "2"), 1, "too many files")
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatal("a refused snapshot wrote to the store")
	}
	if r := e.ok("--help"); !strings.Contains(r.out, "snapshot") {
		t.Fatal("--help does not list the commands")
	}
}

func TestListReferencesAndPins(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	e.vars["CASCKPT_NOW"] = "2026-03-04T05:06:07Z"
	var ids []string
	for i, text := range []string{"one\n", "one\ntwo\n", "two\n"} {
		writeFiles(t, dir, map[string]string{"f.txt": text})
		doc := jsonOf[map[string]any](t, e.ok("snapshot", dir, "-m", "turn "+string(rune('1'+i)), "--json").out)
		ids = append(ids, doc["id"].(string))
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 3 || list[0]["id"] != ids[2] || list[2]["id"] != ids[0] {
		t.Fatalf("list is not newest first: %v", list)
	}
	want := []string{"added_bytes", "added_raw_bytes", "bytes", "deletions", "files_changed", "id", "insertions", "number", "pinned", "reason", "session", "short_id", "time", "title", "turn"}
	if !slices.Equal(keys(list[0]), want) {
		t.Fatalf("list keys %v", keys(list[0]))
	}
	if list[0]["time"] != "2026-03-04T05:06:07Z" || list[0]["short_id"] != ids[2][:12] {
		t.Fatalf("time/short id: %v", list[0])
	}
	if list[0]["insertions"] != 0.0 || list[0]["deletions"] != 1.0 || list[1]["insertions"] != 1.0 {
		t.Fatalf("change counts: %v", list)
	}
	if n := jsonOf[[]any](t, e.ok("list", dir, "-n", "1", "--json").out); len(n) != 1 {
		t.Fatalf("-n 1 gave %d", len(n))
	}
	if out := e.ok("cat", dir, "@1", "f.txt").out; out != "two\n" {
		t.Fatalf("@1 is not the newest: %q", out)
	}
	if out := e.ok("cat", dir, ids[0][:6], "f.txt").out; out != "one\n" {
		t.Fatalf("prefix ref: %q", out)
	}
	for _, bad := range []string{"zz", "@0", "@9", "abc", "ffffff"} {
		failsWith(t, e.run("cat", dir, bad, "f.txt"), 1, bad)
	}
	failsWith(t, e.run("cat", dir, "--", "-rf", "f.txt"), 1, "-rf")
	e.ok("pin", dir, "@3")
	e.ok("snapshot", dir, "--keep", "1") // unchanged: nothing dropped yet
	writeFiles(t, dir, map[string]string{"f.txt": "three\n"})
	e.ok("snapshot", dir, "--keep", "1")
	list = jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 2 || list[1]["id"] != ids[0] || list[1]["pinned"] != true {
		t.Fatalf("keep 1 with a pinned snapshot: %v", list)
	}
	e.ok("unpin", dir, ids[0][:8])
	forgot := jsonOf[map[string]any](t, e.ok("forget", dir, "@2", "--json").out)
	if f, _ := forgot["forgotten"].([]any); len(f) != 1 || f[0] != ids[0] {
		t.Fatalf("forget: %v", forgot)
	}
}

func TestDiffOutputs(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	lines := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	writeFiles(t, dir, map[string]string{"text.txt": lines, "bin.dat": "\x00\x01", "gone.txt": "bye\n"})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"text.txt": strings.Replace(lines, "5\n", "five\n", 1), "bin.dat": "\x00\x02", "new.txt": "hi\n"})
	os.Remove(filepath.Join(dir, "gone.txt"))
	patch := e.ok("diff", dir, "@1").out
	for _, want := range []string{
		"diff --git a/text.txt b/text.txt\n--- a/text.txt\n+++ b/text.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		"Binary files a/bin.dat and b/bin.dat differ",
		"diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n",
		"deleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n",
	} {
		if !strings.Contains(patch, want) {
			t.Fatalf("patch lacks %q:\n%s", want, patch)
		}
	}
	stat := e.ok("diff", dir, "@1", "--stat").out
	if !strings.Contains(stat, "4 files changed, 2 insertions(+), 2 deletions(-)") {
		t.Fatalf("--stat:\n%s", stat)
	}
	doc := jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json").out)
	if want := []string{"deletions", "files", "files_changed", "from", "insertions", "to"}; !slices.Equal(keys(doc), want) {
		t.Fatalf("diff keys %v", keys(doc))
	}
	files := doc["files"].([]any)
	statuses := map[string]string{}
	for _, f := range files {
		m := f.(map[string]any)
		if want := []string{"binary", "deletions", "insertions", "path", "status"}; !slices.Equal(keys(m), want) {
			t.Fatalf("file keys %v", keys(m))
		}
		statuses[m["path"].(string)] = m["status"].(string)
	}
	if doc["to"] != "worktree" || statuses["new.txt"] != "added" || statuses["gone.txt"] != "deleted" || statuses["text.txt"] != "modified" {
		t.Fatalf("diff JSON: %v", doc)
	}
	// --patch: each file's patch, the text output's part for it.
	var patches strings.Builder
	for _, f := range jsonOf[map[string]any](t, e.ok("diff", dir, "@1", "--json", "--patch").out)["files"].([]any) {
		patches.WriteString(f.(map[string]any)["patch"].(string))
	}
	if patches.String() != patch {
		t.Fatalf("diff --json --patch gives the patches %q; diff prints %q", patches.String(), patch)
	}
	// Snapshot to snapshot, and diff changes nothing.
	e.ok("snapshot", dir)
	two := jsonOf[map[string]any](t, e.ok("diff", dir, "@2", "@1", "--json").out)
	if two["to"] == "worktree" || two["files_changed"] != 4.0 {
		t.Fatalf("snapshot to snapshot: %v", two)
	}
	if n := jsonOf[[]any](t, e.ok("list", dir, "--json").out); len(n) != 2 {
		t.Fatal("diff took a snapshot")
	}
}

func TestRestoreThroughTheCommand(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"src/a.go": "v1", "keep.md": "v1", ".gitignore": "ignored.txt\n"})
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
	writeFiles(t, dir, map[string]string{"src/a.go": "v2", "keep.md": "v2", "src/new.go": "new", ".env": "SECRET=1",
		"node_modules/x/i.js": "dep", "ignored.txt": "mine", "big.bin": strings.Repeat("x", 2<<20)})

	dry := jsonOf[map[string]any](t, e.ok("restore", dir, snap, "--dry-run", "--json").out)
	if want := []string{"changes", "deleted", "dry_run", "pre_restore_id", "restored_to", "skipped", "written"}; !slices.Equal(keys(dry), want) {
		t.Fatalf("restore keys %v", keys(dry))
	}
	if dry["dry_run"] != true || dry["pre_restore_id"] != nil || dry["written"] != 2.0 || dry["deleted"] != 2.0 { // src/new.go, and big.bin under the default 10 MiB
		t.Fatalf("dry run: %v", dry)
	}
	failsWith(t, e.run("restore", dir, snap, "/etc"), 1, "relative")
	failsWith(t, e.run("restore", dir, snap, "../x"), 1, "outside")
	failsWith(t, e.run("restore", dir, snap, "nope.txt"), 1, "nope.txt")
	if b, _ := os.ReadFile(filepath.Join(dir, "keep.md")); string(b) != "v2" {
		t.Fatal("a refused restore changed the tree")
	}
	// Only src.
	e.ok("restore", dir, snap, "src")
	if b, _ := os.ReadFile(filepath.Join(dir, "keep.md")); string(b) != "v2" {
		t.Fatal("a path restore touched another path")
	}
	if _, err := os.Stat(filepath.Join(dir, "src/new.go")); !os.IsNotExist(err) {
		t.Fatal("a path restore left a file the snapshot lacks")
	}
	// Everything, with a big file under a 1 MiB limit that must survive.
	full := jsonOf[map[string]any](t, e.ok("restore", dir, snap, "--max-file-size-mb", "1", "--json").out)
	if full["pre_restore_id"] == nil {
		t.Fatal("no pre-restore snapshot")
	}
	for p, want := range map[string]string{".env": "SECRET=1", "node_modules/x/i.js": "dep", "ignored.txt": "mine", "keep.md": "v1", "src/a.go": "v1"} {
		if b, _ := os.ReadFile(filepath.Join(dir, p)); string(b) != want {
			t.Errorf("%s is %q, want %q", p, b, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "big.bin")); err != nil || st.Size() != 2<<20 {
		t.Fatal("the file over the size limit was touched")
	}
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if !strings.HasPrefix(list[0]["reason"].(string), "pre-restore") {
		t.Fatalf("newest snapshot is not the pre-restore one: %v", list[0])
	}
}

func TestExportCatLs(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "alpha", "d/b.bin": "\x00beta"})
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	e.ok("snapshot", dir)
	out := filepath.Join(t.TempDir(), "snap.tar")
	e.ok("export", dir, "@1", "-o", out)
	f, _ := os.Open(out)
	defer f.Close()
	tr := tar.NewReader(f)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got[h.Name] = string(b) + h.Linkname
	}
	if got["a.txt"] != "alpha" || got["d/b.bin"] != "\x00beta" || got["link"] != "a.txt" || len(got) != 4 {
		t.Fatalf("tar entries: %q", got)
	}
	if b := e.ok("cat", dir, "@1", "d/b.bin").out; b != "\x00beta" {
		t.Fatalf("cat: %q", b)
	}
	ls := jsonOf[[]map[string]any](t, e.ok("ls", dir, "@1", "--json").out)
	if len(ls) != 4 || !slices.Equal(keys(ls[0]), []string{"mode", "path", "size", "type"}) {
		t.Fatalf("ls: %v", ls)
	}
	types := map[string]string{}
	for _, it := range ls {
		types[it["path"].(string)] = it["type"].(string)
	}
	if types["d"] != "dir" || types["link"] != "symlink" || types["a.txt"] != "file" {
		t.Fatalf("ls types: %v", types)
	}
}

func TestMaintenanceCommands(t *testing.T) {
	e := newEnv(t)
	gone, live := t.TempDir(), t.TempDir()
	writeFiles(t, gone, map[string]string{"f": strings.Repeat("g", 100_000)})
	writeFiles(t, live, map[string]string{"f": "live"})
	e.vars["CASCKPT_NOW"] = "2026-01-01T00:00:00Z"
	e.ok("snapshot", gone)
	e.ok("snapshot", live)
	os.RemoveAll(gone)
	st := jsonOf[map[string]any](t, e.ok("status", "--json").out)
	states := map[string]string{}
	for _, p := range st["projects"].([]any) {
		m := p.(map[string]any)
		if want := []string{"bytes", "created_at", "last_touch", "lifecycle", "snapshots", "state", "stored_bytes", "stored_raw_bytes", "test", "workdir"}; !slices.Equal(keys(m), want) {
			t.Fatalf("project keys %v", keys(m))
		}
		if m["lifecycle"] != nil || m["test"] != false {
			t.Fatalf("a project without policy: lifecycle %v, test %v", m["lifecycle"], m["test"])
		}
		states[m["workdir"].(string)] = m["state"].(string)
	}
	if len(states) != 2 || slices.Index(slices.Collect(maps.Values(states)), "orphan") < 0 {
		t.Fatalf("status states: %v", states)
	}
	pr := jsonOf[map[string]any](t, e.ok("prune", "--json").out)
	if want := []string{"bytes_freed", "deleted_completed", "deleted_failed", "deleted_orphan", "deleted_stale", "deleted_test", "drops", "scanned", "skipped", "snapshots_dropped"}; !slices.Equal(keys(pr), want) {
		t.Fatalf("prune keys %v", keys(pr))
	}
	if pr["deleted_orphan"] != 1.0 || pr["bytes_freed"].(float64) < 1 {
		t.Fatalf("prune: %v", pr)
	}
	if auto := jsonOf[map[string]any](t, e.ok("prune", "--auto", "--json").out); auto["skipped"] != true || len(auto) != 1 {
		t.Fatalf("prune --auto right after a prune: %v", auto)
	}
	e.vars["CASCKPT_NOW"] = "2026-01-20T00:00:00Z" // 19 days later: live is stale
	pr = jsonOf[map[string]any](t, e.ok("prune", "--auto", "--json").out)
	if pr["skipped"] != false || pr["deleted_stale"] != 1.0 {
		t.Fatalf("prune after the interval: %v", pr)
	}
	gc := jsonOf[map[string]any](t, e.ok("gc", "--json").out)
	if !slices.Equal(keys(gc), []string{"bytes_freed", "objects_deleted"}) {
		t.Fatalf("gc keys %v", keys(gc))
	}
	failsWith(t, e.run("clear"), 1, "--yes")
	e.ok("clear", "--yes")
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatal("clear left the store")
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// builtBinaryEnv names the binary binary built, for a test run again as
// nobody (see runsBinaryAsNobody), which cannot build it.
const builtBinaryEnv = "CASCKPT_TEST_BINARY"

// binary builds the casckpt command once for the tests that exec it.
func binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(builtBinaryEnv); p != "" {
		return p
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "casckpt-bin")
		if err == nil {
			err = os.Chmod(dir, 0o755) // for runsBinaryAsNobody
		}
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "casckpt")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the README builds it
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// runsBinaryAsNobody builds the binary, where the test runs as root, for
// the child testtree.AsUnprivileged starts to run (its go command could
// not build it as nobody): call it before AsUnprivileged.
func runsBinaryAsNobody(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Setenv(builtBinaryEnv, binary(t))
	}
}

// binEnv runs the built binary with a private HOME and store: the one way
// the subprocess tests start casckpt.
type binEnv struct {
	t         *testing.T
	bin, home string
	extra     []string // more environment, after (over) the defaults
}

func newBinEnv(t *testing.T) *binEnv {
	t.Helper()
	return &binEnv{t: t, bin: binary(t), home: t.TempDir()}
}

// filePacks is env.filePacks for a binary's runs.
func (b *binEnv) filePacks() *binEnv {
	b.extra = append(b.extra, "CASCKPT_FILE_PACKS=1")
	return b
}

// store is the store's directory.
func (b *binEnv) store() string { return filepath.Join(b.home, "store") }

// command is the command that runs casckpt with args, not yet started.
func (b *binEnv) command(args ...string) *exec.Cmd {
	return b.commandContext(context.Background(), args...)
}

// commandContext is command, killed when ctx ends.
func (b *binEnv) commandContext(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, b.bin, args...)
	// No git on PATH: the product never needs it.
	c.Env = append([]string{"HOME=" + b.home, "CASCKPT_HOME=" + b.store(), "PATH=/nonexistent"}, b.extra...)
	return c
}

// runCmd runs c, one of b's commands, and returns its exit status and
// output. A command that cannot be started fails the test.
func (b *binEnv) runCmd(c *exec.Cmd) result {
	b.t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// runUmask runs casckpt with args under umask (or the test's own when empty).
func (b *binEnv) runUmask(umask string, args ...string) result {
	b.t.Helper()
	c := b.command(args...)
	if umask != "" {
		c.Args = append([]string{"/bin/sh", "-c", "umask " + umask + `; exec "$0" "$@"`}, c.Args...)
		c.Path = "/bin/sh"
	}
	return b.runCmd(c)
}

// run runs casckpt with args.
func (b *binEnv) run(args ...string) result {
	b.t.Helper()
	return b.runCmd(b.command(args...))
}

// ok runs a command that must succeed.
func (b *binEnv) ok(args ...string) result {
	b.t.Helper()
	r := b.run(args...)
	if r.code != 0 {
		b.t.Fatalf("casckpt %q: exit %d, stderr %q", args, r.code, r.err)
	}
	return r
}

func TestBinaryExitCodesAndJSON(t *testing.T) {
	b := newBinEnv(t) // with no git on PATH
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"x.txt": "x"})
	r := b.run("snapshot", dir, "--json", "-m", "from the binary, with git absent from PATH")
	if r.code != 0 || jsonOf[map[string]any](t, r.out)["created"] != true {
		t.Fatalf("snapshot: %d %s", r.code, r.out)
	}
	if r := b.run("nope"); r.code != 2 || !strings.HasPrefix(r.err, "casckpt: ") {
		t.Fatalf("unknown command: %d %q", r.code, r.err)
	}
	if r := b.run("restore", dir, "@5", "--json"); r.code != 1 || strings.Count(r.err, "\n") != 1 {
		t.Fatalf("missing snapshot: %d %q %q", r.code, r.out, r.err)
	}
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("changed"), 0o644)
	b.ok("restore", dir, "@1")
	if got, _ := os.ReadFile(filepath.Join(dir, "x.txt")); string(got) != "x" {
		t.Fatalf("restored bytes %q", got)
	}
}

func TestHostileReasonsAndNames(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"new\nline.txt": "x", "tab\tand \"quote\".txt": "y", "bad\xffutf8": "z"})
	reason := "quote \" backslash \\ newline \n tab \t nul-free <script> \u2028 \xff end"
	e.ok("snapshot", dir, "-m", reason)
	list := jsonOf[[]map[string]any](t, e.ok("list", dir, "--json").out)
	if len(list) != 1 || !strings.HasPrefix(list[0]["reason"].(string), "quote \" backslash \\ newline \n tab") {
		t.Fatalf("reason did not survive JSON: %q", list[0]["reason"])
	}
	ls := jsonOf[[]map[string]any](t, e.ok("ls", dir, "@1", "--json").out)
	if len(ls) != 3 {
		t.Fatalf("ls: %v", ls)
	}
	if human := e.ok("list", dir).out; strings.Count(human, "\n") != 2 {
		t.Fatalf("a reason with a newline broke the table:\n%s", human)
	}
	if out := e.ok("cat", dir, "@1", "new\nline.txt").out; out != "x" {
		t.Fatalf("cat of a name with a newline: %q", out)
	}
}
