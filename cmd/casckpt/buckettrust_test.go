package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

// machines returns n environments that share one fresh store in srv's
// bucket, each with its own cache (its own machine) and the environment
// in env[i] added.
func machines(t *testing.T, srv *s3test.Server, env ...[]string) []*binEnv {
	t.Helper()
	out := make([]*binEnv, len(env))
	store := ""
	for i, e := range env {
		out[i] = newBinEnv(t)
		s3Env(t, out[i], srv)
		for _, v := range out[i].extra {
			if strings.HasPrefix(v, "CASCKPT_HOME=") && store == "" {
				store = v
			}
		}
		out[i].extra = append(append(out[i].extra, store), e...) // the first one's store
	}
	return out
}

// listOf returns the IDs of the snapshots that b lists of dir, newest
// first, and the list's entries.
func listOf(t *testing.T, b *binEnv, dir string, args ...string) ([]string, []map[string]any) {
	t.Helper()
	l := jsonOf[[]map[string]any](t, b.ok(append([]string{"list", dir, "--json"}, args...)...).out)
	var ids []string
	for _, e := range l {
		ids = append(ids, e["id"].(string))
	}
	return ids, l
}

// TestS3ForgedRecordNamesNoDirectory: someone who can write to the bucket
// puts records under this machine's own ID (read from the bucket) naming
// a directory beside the agent's project (a ~/.ssh) as a project with the
// prompt's turn open, and the directory above the project as another. The
// hook of this machine snapshots neither: a tool event checkpoints the
// directory of the file it writes, not the forged project above it, and
// Stop ends the turn only in the projects this machine recorded itself.
func TestS3ForgedRecordNamesNoDirectory(t *testing.T) {
	srv := s3test.Start(t)
	m := machines(t, srv, []string{"CASCKPT_MACHINE=victim"}, []string{"CASCKPT_MACHINE=victim"})
	victim, forger := m[0], m[1]
	parent := t.TempDir()
	work, secret := filepath.Join(parent, "work"), filepath.Join(parent, ".ssh")
	writeFiles(t, work, map[string]string{"a.txt": "a\n"})
	writeFiles(t, secret, map[string]string{"id_ed25519": "decoy\n"})
	h := &hookSession{t: t, b: victim, cwd: work, session: "s1"}
	h.send(withPromptID(t, h.fixture("user_prompt_submit", map[string]string{"prompt": "go"}), "p1"))

	forger.ok("snapshot", secret, "--session", "s1", "--turn", "p1")
	forger.ok("snapshot", parent)
	writeFiles(t, secret, map[string]string{"id_ed25519": "PRIVATE KEY\n"})

	h.send(withPromptID(t, h.fixture("pre_tool_use_write", map[string]string{"file": filepath.Join(work, "a.txt"), "content": "b"}), "p1"))
	writeFiles(t, work, map[string]string{"a.txt": "b\n"})
	notes := filepath.Join(parent, "notes") // no root marker: the forged project above would hold it
	writeFiles(t, notes, map[string]string{"todo.txt": "x\n"})
	h.send(withPromptID(t, h.fixture("pre_tool_use_write", map[string]string{"file": filepath.Join(notes, "todo.txt"), "content": "y"}), "p1"))
	h.send(withPromptID(t, h.fixture("stop", nil), "p1"))

	for _, dir := range []string{secret, parent} {
		if ids, _ := listOf(t, victim, dir); len(ids) != 1 {
			t.Errorf("%s: %d snapshots, want only the forged one: the hook snapshotted a directory a record from the bucket named", dir, len(ids))
		}
	}
	fresh := &binEnv{t: t, bin: victim.bin, home: t.TempDir(), extra: slices.Clone(victim.extra)}
	fresh.extra = append(fresh.extra, "XDG_CACHE_HOME="+filepath.Join(fresh.home, "cache"))
	for _, dir := range []string{secret, parent} {
		ids, _ := listOf(t, fresh, dir)
		for _, id := range ids {
			if r := fresh.run("cat", dir, id, strings.TrimPrefix(secret, dir+"/")+"/id_ed25519"); strings.Contains(r.out, "PRIVATE") {
				t.Fatalf("the private key is in the bucket, in snapshot %s of %s", id, dir)
			}
			if r := fresh.run("cat", dir, id, "id_ed25519"); strings.Contains(r.out, "PRIVATE") {
				t.Fatalf("the private key is in the bucket, in snapshot %s of %s", id, dir)
			}
		}
	}
	if turns := turnsOf(t, victim, work); len(turns) != 1 || turns[0]["turn"] != "p1" || turns[0]["end"] == nil || turns[0]["files_changed"] != 1.0 {
		t.Errorf("the agent's project: turns %v", turns)
	}
}

// TestS3FleetKey: with CASCKPT_FLEET_KEY set, a machine reads only what a
// writer holding the same key put. A snapshot from before the key, a
// snapshot, a drop and a pin put without a key and a snapshot put with
// another key are ignored (even under this machine's ID) and named by
// verify; a cache built before the key was set is rebuilt for it.
func TestS3FleetKey(t *testing.T) {
	srv := s3test.Start(t)
	m := machines(t, srv, []string{"CASCKPT_MACHINE=m"}, []string{"CASCKPT_MACHINE=m"}, []string{"CASCKPT_MACHINE=m", "CASCKPT_FLEET_KEY=not the fleet's"})
	a, nokey, otherKey := m[0], m[1], m[2]
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "before the key\n"})
	a.ok("snapshot", dir)
	a.extra = append(a.extra, "CASCKPT_FLEET_KEY=the fleet's secret")
	writeFiles(t, dir, map[string]string{"f.txt": "signed\n"})
	signed := jsonOf[map[string]any](t, a.ok("snapshot", dir, "--json").out)["id"].(string)
	if ids, _ := listOf(t, a, dir); !slices.Equal(ids, []string{signed}) {
		t.Fatalf("with the key: %v, want only %s (the cache from before the key still holds the unsigned snapshot)", ids, signed)
	}

	if ids, _ := listOf(t, nokey, dir); len(ids) != 2 {
		t.Fatalf("a machine without the key reads every snapshot: %v", ids)
	}
	nokey.ok("pin", dir, signed)
	nokey.ok("forget", dir, signed)
	writeFiles(t, dir, map[string]string{"f.txt": "unsigned\n"})
	nokey.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"f.txt": "another key\n"})
	otherKey.ok("snapshot", dir)

	ids, l := listOf(t, a, dir)
	if !slices.Equal(ids, []string{signed}) || l[0]["pinned"] != false {
		t.Fatalf("with the key: %v, want only %s, not pinned", l, signed)
	}
	a.ok("restore", dir, signed)
	if got := readFiles(t, dir)["f.txt"]; got != "signed\n" {
		t.Fatalf("restored %q", got)
	}
	r := a.run("verify", "--json")
	v := jsonOf[map[string]any](t, r.out)
	kinds := map[string]int{}
	for _, o := range v["rejected"].([]any) {
		o := o.(map[string]any)
		key, reason := o["key"].(string), o["reason"].(string)
		kinds[strings.SplitN(key, "/", 2)[0]+" "+reason]++
	}
	want := map[string]int{
		"commits carries no fleet signature":                                 2, // before the key; without one
		"commits carries a fleet signature that the fleet key does not make": 1,
		"dropped carries no fleet signature":                                 1,
		"pins carries no fleet signature":                                    1,
	}
	if r.code != 1 || fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("verify: exit %d, rejected %v, want %v; stderr %q", r.code, kinds, want, r.err)
	}
	if !strings.Contains(r.err, "no valid fleet signature") {
		t.Errorf("verify's message: %q", r.err)
	}
	if r := a.run("gc"); r.code != 1 || !strings.Contains(r.err, "no valid fleet signature") {
		t.Errorf("gc with an unsigned commit in the bucket: exit %d, %q, want a refusal: its packs are no garbage to it", r.code, r.err)
	}
}

// TestS3TwoMachinesOnePath: two machines whose agents work at one path
// (two sandboxes at /workspace) keep separate histories: each lists,
// keeps and undoes its own, reads the other's with --machine, and can
// restore the other's snapshot into its directory (pre-restore snapshot
// first).
func TestS3TwoMachinesOnePath(t *testing.T) {
	srv := s3test.Start(t)
	m := machines(t, srv, []string{"CASCKPT_MACHINE=alpha"}, []string{"CASCKPT_MACHINE=beta"})
	a, b := m[0], m[1]
	dir := t.TempDir()
	snap := func(e *binEnv, files map[string]string, args ...string) string {
		t.Helper()
		writeFiles(t, dir, files)
		return jsonOf[map[string]any](t, e.ok(append([]string{"snapshot", dir, "--json"}, args...)...).out)["id"].(string)
	}
	snap(a, map[string]string{"a.txt": "a0\n"}, "--session", "s", "--turn", "ta")
	aEnd := snap(a, map[string]string{"a.txt": "a1\n"}, "--session", "s", "--turn", "ta", "--end-turn")
	snap(b, map[string]string{"b.txt": "b0\n"}, "--session", "s", "--turn", "tb")
	bEnd := snap(b, map[string]string{"b.txt": "b1\n"}, "--session", "s", "--turn", "tb", "--end-turn")
	bFiles := readFiles(t, dir)

	ids, l := listOf(t, a, dir)
	if len(ids) != 2 || ids[0] != aEnd || l[0]["machine"] != "alpha" {
		t.Fatalf("alpha lists %v", l)
	}
	ids, l = listOf(t, a, dir, "--machine", "beta")
	if len(ids) != 2 || ids[0] != bEnd || l[0]["machine"] != "beta" {
		t.Fatalf("alpha lists beta's: %v", l)
	}
	if got := a.ok("cat", dir, bEnd[:12], "b.txt", "--machine", "beta").out; got != "b1\n" {
		t.Fatalf("alpha reads beta's b.txt: %q", got)
	}
	if d := jsonOf[map[string]any](t, a.ok("diff", dir, bEnd[:12], "--machine", "beta", "--json").out); d["files_changed"] != 0.0 {
		t.Fatalf("beta's newest against the tree here: %v", d)
	}
	if h := jsonOf[[]map[string]any](t, a.ok("log", dir, "b.txt", "--machine", "beta", "--json").out); len(h) != 2 {
		t.Fatalf("beta's history of b.txt: %v", h)
	}
	if out := a.ok("list", dir, "--machine", "beta").out; !strings.HasPrefix(out, "machine beta\n") {
		t.Fatalf("alpha lists beta's for people:\n%s", out)
	}
	if out := a.ok("turns", dir).out; !strings.HasPrefix(out, "machine alpha\n") {
		t.Fatalf("alpha's turns for people:\n%s", out)
	}
	if turns := turnsOf(t, a, dir); len(turns) != 1 || turns[0]["turn"] != "ta" || turns[0]["machine"] != "alpha" {
		t.Fatalf("alpha's turns: %v", turns)
	}
	st := jsonOf[map[string]any](t, a.ok("status", "--json").out)
	var seen []string
	for _, p := range st["projects"].([]any) {
		p := p.(map[string]any)
		if p["workdir"] == dir {
			seen = append(seen, fmt.Sprint(p["machine"], " ", p["snapshots"], " ", p["state"]))
		}
	}
	slices.Sort(seen)
	if want := []string{"alpha 2 live", "beta 2 unreachable"}; !slices.Equal(seen, want) {
		t.Fatalf("status: %v, want %v", seen, want)
	}

	// Undo takes alpha's newest turn, not beta's newer one.
	u := jsonOf[map[string]any](t, a.ok("undo", dir, "--json").out)
	if u["turn"] != "ta" || readFiles(t, dir)["a.txt"] != "a0\n" || readFiles(t, dir)["b.txt"] != "b1\n" {
		t.Fatalf("alpha's undo: %v, files %v", u, readFiles(t, dir))
	}
	// The keep rule counts alpha's snapshots only.
	snap(a, map[string]string{"a.txt": "a2\n"}, "--keep", "1")
	if ids, _ := listOf(t, a, dir); len(ids) != 1 {
		t.Fatalf("alpha keeps %d snapshots, want 1", len(ids))
	}
	if ids, _ := listOf(t, b, dir); len(ids) != 2 {
		t.Fatalf("beta's snapshots after alpha's keep 1: %v", ids)
	}

	// Resume beta's work on alpha: alpha's unsaved edit goes to its
	// pre-restore snapshot first.
	writeFiles(t, dir, map[string]string{"a.txt": "a3, not saved\n"})
	r := jsonOf[map[string]any](t, a.ok("restore", dir, bEnd[:12], "--machine", "beta", "--json").out)
	if got := readFiles(t, dir); fmt.Sprint(got) != fmt.Sprint(bFiles) {
		t.Fatalf("after restore --machine beta: %v, want %v", got, bFiles)
	}
	pre, _ := r["pre_restore_id"].(string)
	if ids, _ := listOf(t, a, dir); pre == "" || ids[0] != pre {
		t.Fatalf("the pre-restore snapshot %q is not alpha's newest: %v", pre, ids)
	}
	if got := a.ok("cat", dir, pre[:12], "a.txt").out; got != "a3, not saved\n" {
		t.Fatalf("the pre-restore snapshot holds %q", got)
	}
	if ids, _ := listOf(t, b, dir); len(ids) != 2 {
		t.Fatalf("beta's snapshots after alpha's restore: %v", ids)
	}
	if r := a.run("list", dir, "--machine", "no/such"); r.code != 2 {
		t.Errorf("a bad --machine: exit %d, %q", r.code, r.err)
	}
}
