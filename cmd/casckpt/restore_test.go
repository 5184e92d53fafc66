package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/osfs"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// A project file hard-linked to a file outside differs from the snapshot
// only in its executable bit: the restore replaces the project's file and
// leaves the outside inode's mode and bytes alone.
func TestRestoreNeverChangesAHardLinkedInodeInPlace(t *testing.T) {
	b := newBinEnv(t)
	base := t.TempDir()
	dir, outside := filepath.Join(base, "proj"), filepath.Join(base, "outside.sh")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(outside, []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(t, os.Link(outside, filepath.Join(dir, "run.sh")))
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--json").out)["id"].(string)
	must(t, os.Chmod(outside, 0o644)) // the project's run.sh loses its exec bit too

	b.ok("restore", dir, snap)
	if m := mode(t, outside); m != 0o644 {
		t.Fatalf("restore changed the mode of a file outside the project to %v", m)
	}
	if got, _ := os.ReadFile(outside); string(got) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("restore changed the bytes outside the project: %q", got)
	}
	p := filepath.Join(dir, "run.sh")
	if m := mode(t, p); m&0o100 == 0 {
		t.Fatalf("run.sh restored without its exec bit: %v", m)
	}
	if got, _ := os.ReadFile(p); string(got) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("run.sh restored as %q", got)
	}
}

// Restored files and directories are created as git creates them: 0666,
// 0777 for executables and directories, less the process umask.
func TestRestoreHonoursTheUmask(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "sub/c.txt": "c", "run.sh": "#!/bin/sh\n"})
	must(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--json").out)["id"].(string)
	must(t, os.RemoveAll(filepath.Join(dir, "sub")))
	must(t, os.Remove(filepath.Join(dir, "run.sh")))
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed"), 0o644))

	if r := b.runUmask("077", "restore", dir, snap); r.code != 0 {
		t.Fatalf("restore under umask 077: %d %s", r.code, r.err)
	}
	for p, want := range map[string]os.FileMode{"a.txt": 0o600, "sub/c.txt": 0o600, "run.sh": 0o700, "sub": 0o700} {
		if m := mode(t, filepath.Join(dir, p)); m != want {
			t.Errorf("%s restored as %v under umask 077, want %v", p, m, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "a" {
		t.Fatalf("a.txt restored as %q", got)
	}
}

// A killed restore's temporary file is removed by the next snapshot; one a
// live restore holds locked is left alone; neither is captured.
func TestSnapshotRemovesLeftoversNoLiveProcessOwns(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	stale, live := ".casckpt-0123456789abcdef.tmp", "sub/.casckpt-fedcba9876543210.tmp"
	writeFiles(t, dir, map[string]string{"main.go": "package main\n", stale: "half a file", live: "being written"})
	f, err := os.OpenFile(filepath.Join(dir, live), os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	must(t, osfs.Lock(f, true)) // as a live restore holds it

	b.ok("snapshot", dir)
	if _, err := os.Lstat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Fatalf("the leftover of a killed restore is still there: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, live)); string(got) != "being written" {
		t.Fatal("a live restore's temporary file was removed")
	}
	var paths []string
	for _, e := range jsonOf[[]map[string]any](t, b.ok("ls", dir, "@1", "--json").out) {
		paths = append(paths, e["path"].(string))
	}
	if slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(p, ".casckpt-") }) {
		t.Fatalf("a temporary file was captured: %q", paths)
	}
}

// A file the snapshot holds that has since grown past the size limit is
// put back by a whole restore.
func TestRestoreBringsBackAFileThatGrewPastTheLimit(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"data.json": `{"small": true}`, "new-big.bin": ""})
	must(t, os.Remove(filepath.Join(dir, "new-big.bin")))
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--max-file-size-mb", "1", "--json").out)["id"].(string)
	writeFiles(t, dir, map[string]string{"data.json": strings.Repeat("bloat", 1<<19), "new-big.bin": strings.Repeat("x", 2<<20)})

	r := jsonOf[map[string]any](t, b.ok("restore", dir, snap, "--json").out)
	if got, _ := os.ReadFile(filepath.Join(dir, "data.json")); string(got) != `{"small": true}` {
		t.Fatalf("the grown file was not restored: %d bytes (%v)", len(got), r)
	}
	if st, err := os.Stat(filepath.Join(dir, "new-big.bin")); err != nil || st.Size() != 2<<20 {
		t.Fatal("a large file the snapshot lacks was touched")
	}
}

// A restore refused because the snapshot is damaged takes no pre-restore
// snapshot, and names the newest intact snapshot.
func TestRestoreOfADamagedSnapshotTakesNoPreRestoreSnapshot(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	old := make([]byte, 200<<10)
	rand.Read(old)
	must(t, os.WriteFile(filepath.Join(dir, "old.bin"), old, 0o644))
	b.ok("snapshot", dir)
	must(t, os.Remove(filepath.Join(dir, "old.bin")))
	writeFiles(t, dir, map[string]string{"new.txt": "new\n"})
	b.ok("snapshot", dir)
	before := listedIDs(t, []byte(b.ok("list", dir, "--json").out))

	// Damage the older snapshot's pack, the larger one, in old.bin's bytes.
	packs, _ := filepath.Glob(filepath.Join(b.home, "store", "packs", "*.pack"))
	slices.SortFunc(packs, func(x, y string) int { return int(fileSize(t, y) - fileSize(t, x)) })
	pack := packs[0]
	data, err := os.ReadFile(pack)
	must(t, err)
	data[len(data)/2] ^= 0xff
	must(t, os.WriteFile(pack, data, 0o600))
	writeFiles(t, dir, map[string]string{"edit.txt": "an edit a pre-restore snapshot would hold\n"})

	r := b.runUmask("", "restore", dir, "@2")
	if r.code != 1 || strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "the newest intact snapshot is "+before[0]) {
		t.Fatalf("restore of a damaged snapshot: exit %d, %q; want the newest intact %s", r.code, r.err, before[0])
	}
	if after := listedIDs(t, []byte(b.ok("list", dir, "--json").out)); !slices.Equal(after, before) {
		t.Fatalf("a refused restore changed the list: %v, was %v", after, before)
	}
	if _, err := os.Stat(filepath.Join(dir, "edit.txt")); err != nil {
		t.Fatal("a refused restore changed the tree")
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	must(t, err)
	return st.Size()
}

// restore --json lists what it writes and deletes, in a dry run too.
func TestRestoreJSONListsChanges(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a", "b.txt": "b", "sub/c.txt": "c"})
	snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
	writeFiles(t, dir, map[string]string{"a.txt": "changed", "new.txt": "new"})
	must(t, os.RemoveAll(filepath.Join(dir, "sub")))

	type change struct{ Path, Action string }
	type doc struct {
		Changes []change
		Skipped []string
		Written int
		Deleted int
	}
	want := []change{{"a.txt", "write"}, {"new.txt", "delete"}, {"sub/c.txt", "write"}}
	sorted := func(c []change) []change {
		slices.SortFunc(c, func(x, y change) int { return strings.Compare(x.Path, y.Path) })
		return c
	}
	dry := jsonOf[doc](t, e.ok("restore", dir, snap, "--dry-run", "--json").out)
	if !slices.Equal(sorted(dry.Changes), want) || dry.Skipped == nil || dry.Written != 2 || dry.Deleted != 1 {
		t.Fatalf("dry run: %+v", dry)
	}
	full := jsonOf[doc](t, e.ok("restore", dir, snap, "--json").out)
	if !slices.Equal(sorted(full.Changes), want) {
		t.Fatalf("restore: %+v", full)
	}
	again := jsonOf[map[string]any](t, e.ok("restore", dir, snap, "--json").out)
	if c, ok := again["changes"].([]any); !ok || len(c) != 0 {
		t.Fatalf("an empty restore's changes are %v, want []", again["changes"])
	}
}

func TestRestoreHelpSaysTheDefaultOnce(t *testing.T) {
	out := newEnv(t).ok("restore", "--help").out
	i := strings.Index(out, "--max-file-size-mb")
	if i < 0 {
		t.Fatal(out)
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	if strings.Count(line, "default") != 1 || !strings.Contains(line, "the snapshot's own limit") {
		t.Fatalf("help of --max-file-size-mb: %q", line)
	}
}

// TestRestoreRefusesAnOverflowingSizeLimit: a --max-file-size-mb too large
// to count in bytes is a usage error, not a limit that wrapped around.
func TestRestoreRefusesAnOverflowingSizeLimit(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	e.ok("snapshot", dir)
	for _, v := range []string{"17592186044417", "0", "-1"} {
		failsWith(t, e.run("restore", dir, "@1", "--max-file-size-mb", v), 2, "--max-file-size-mb")
	}
	e.ok("restore", dir, "@1", "--max-file-size-mb", "1")
}
