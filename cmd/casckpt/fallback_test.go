package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostSession is a workflow host's session directory, as spec 191's
// host keeps it: checkpoint.json rewritten at each step, then
// `snapshot --keep 10`. ids[i] is step i+1's snapshot, packs[i] the pack
// files its snapshot wrote (its own objects: the new checkpoint.json's
// chunk and the trees).
type hostSession struct {
	t     *testing.T
	b     *binEnv
	dir   string
	ids   []string
	packs [][]string
}

// newHostSession runs steps steps of a workflow in a new session
// directory; step n's state is stepState(n).
func newHostSession(t *testing.T, b *binEnv, steps int) *hostSession {
	t.Helper()
	b.filePacks() // its states lose their pack files
	s := &hostSession{t: t, b: b, dir: filepath.Join(b.home, "session")}
	for n := 1; n <= steps; n++ {
		s.step(stepState(n))
	}
	if ids := listedIDs(t, []byte(b.ok("list", s.dir, "--json").out)); len(ids) != min(steps, 10) {
		t.Fatalf("%d steps with --keep 10 left %d snapshots", steps, len(ids))
	}
	return s
}

// stepState is checkpoint.json as step n writes it.
func stepState(n int) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`"Step %d"`, i+1)
	}
	return fmt.Sprintf(`{"iteration": %d, "steps": [%s]}`+"\n", n, strings.Join(steps, ", "))
}

// step writes checkpoint.json as state and snapshots the session.
func (s *hostSession) step(state string) {
	s.t.Helper()
	before := s.packFiles()
	writeFiles(s.t, s.dir, map[string]string{"checkpoint.json": state})
	doc := jsonOf[map[string]any](s.t, s.b.ok("snapshot", s.dir, "--keep", "10", "--json").out)
	var added []string
	for _, p := range s.packFiles() {
		if !slices.Contains(before, p) {
			added = append(added, p)
		}
	}
	if doc["created"] != true || len(added) == 0 {
		s.t.Fatalf("step %d: snapshot %v wrote packs %v", len(s.ids)+1, doc, added)
	}
	s.ids = append(s.ids, doc["id"].(string))
	s.packs = append(s.packs, added)
}

func (s *hostSession) packFiles() []string {
	names, _ := filepath.Glob(filepath.Join(s.b.store(), "packs", "*.pack"))
	return names
}

// corrupt overwrites every byte of the packs step n (from 1) wrote with
// junk, keeping their size.
func (s *hostSession) corrupt(n int) {
	s.t.Helper()
	for _, p := range s.packs[n-1] {
		junkFile(s.t, p)
	}
}

// lose deletes the packs step n (from 1) wrote.
func (s *hostSession) lose(n int) {
	s.t.Helper()
	for _, p := range s.packs[n-1] {
		must(s.t, os.Remove(p))
	}
}

// junkFile overwrites every byte of the file at p, keeping its size.
func junkFile(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	must(t, err)
	junk := strings.Repeat("\xde\xad\xbe\xef", int(st.Size()/4+1))[:st.Size()]
	must(t, os.WriteFile(p, []byte(junk), 0o600))
}

// catDoc is cat --json's document.
type catDoc struct {
	ID      string
	Path    string
	Content *string
	Tried   []struct{ ID, Reason string }
}

// fallbackWarning checks that stderr is one warning line that names the
// snapshot used and each one passed over.
func fallbackWarning(t *testing.T, stderr, used string, passed ...string) {
	t.Helper()
	ok := strings.Count(stderr, "\n") == 1 && strings.HasPrefix(stderr, "casckpt: warning: used snapshot "+used[:12]+", the newest intact one; passed over ")
	for _, id := range passed {
		ok = ok && strings.Contains(stderr, id[:12]+" (damaged: ")
	}
	if !ok {
		t.Fatalf("stderr %q: want one line naming %s used and %v passed over as damaged", stderr, used[:12], passed)
	}
}

// AC4: the newest state's data is corrupt: cat --fallback gives the state
// before, by bytes and in JSON, and says so on stderr; restore --fallback
// writes it; without --fallback both refuse.
func TestFallbackNewestStateCorrupt(t *testing.T) {
	b := newBinEnv(t)
	s := newHostSession(t, b, 12)
	s.corrupt(12)

	if r := b.run("cat", s.dir, "@1", "checkpoint.json"); r.code != 1 || !strings.Contains(r.err, "snapshot damaged") {
		t.Fatalf("cat of the corrupt newest state: exit %d, %q", r.code, r.err)
	}
	r := b.ok("cat", s.dir, "@1", "checkpoint.json", "--fallback")
	if r.out != stepState(11) {
		t.Fatalf("cat --fallback printed %q, want step 11's %q", r.out, stepState(11))
	}
	fallbackWarning(t, r.err, s.ids[10], s.ids[11])
	doc := jsonOf[catDoc](t, b.ok("cat", s.dir, "@1", "checkpoint.json", "--fallback", "--json").out)
	if doc.ID != s.ids[10] || doc.Path != "checkpoint.json" || doc.Content == nil || *doc.Content != stepState(11) ||
		len(doc.Tried) != 1 || doc.Tried[0].ID != s.ids[11] || !strings.HasPrefix(doc.Tried[0].Reason, "damaged: ") {
		t.Fatalf("cat --fallback --json: %+v", doc)
	}

	// The host's file is half written when it resumes from the store.
	writeFiles(t, s.dir, map[string]string{"checkpoint.json": `{"iteration": 1`})
	if r := b.run("restore", s.dir, "@1"); r.code != 1 || !strings.Contains(r.err, "nothing was changed") {
		t.Fatalf("restore of the corrupt newest state: exit %d, %q", r.code, r.err)
	}
	r = b.ok("restore", s.dir, "@1", "--fallback", "--json")
	fallbackWarning(t, r.err, s.ids[10], s.ids[11])
	res := jsonOf[map[string]any](t, r.out)
	tried, _ := res["tried"].([]any)
	if res["restored_to"] != s.ids[10] || res["pre_restore_id"] == nil || len(tried) != 1 || tried[0].(map[string]any)["id"] != s.ids[11] {
		t.Fatalf("restore --fallback --json: %v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); string(got) != stepState(11) {
		t.Fatalf("restore --fallback wrote %q, want step 11's state", got)
	}
}

// AC5: the two newest states are damaged (one pack corrupt, one lost):
// the third newest is used, and both are named, newest first.
func TestFallbackTwoStatesCorrupt(t *testing.T) {
	b := newBinEnv(t)
	s := newHostSession(t, b, 12)
	s.corrupt(12)
	s.lose(11)

	r := b.ok("cat", s.dir, "@1", "checkpoint.json", "--fallback", "--json")
	fallbackWarning(t, r.err, s.ids[9], s.ids[11], s.ids[10])
	doc := jsonOf[catDoc](t, r.out)
	if doc.ID != s.ids[9] || doc.Content == nil || *doc.Content != stepState(10) || len(doc.Tried) != 2 ||
		doc.Tried[0].ID != s.ids[11] || doc.Tried[1].ID != s.ids[10] {
		t.Fatalf("cat --fallback --json with two damaged states: %+v", doc)
	}
	writeFiles(t, s.dir, map[string]string{"checkpoint.json": `{"iteration": 1`})
	res := jsonOf[map[string]any](t, b.ok("restore", s.dir, "@1", "--fallback", "--json").out)
	if tried, _ := res["tried"].([]any); res["restored_to"] != s.ids[9] || len(tried) != 2 {
		t.Fatalf("restore --fallback --json: %v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); string(got) != stepState(10) {
		t.Fatalf("restore --fallback wrote %q, want step 10's state", got)
	}
	// SNAP names where the search starts: @2 (damaged too) falls back to
	// step 10 as well, passing over only itself.
	doc = jsonOf[catDoc](t, b.ok("cat", s.dir, "#11", "checkpoint.json", "--fallback", "--json").out)
	if doc.ID != s.ids[9] || len(doc.Tried) != 1 || doc.Tried[0].ID != s.ids[10] {
		t.Fatalf("cat #11 --fallback --json: %+v", doc)
	}
}

// A tree unchanged since a state whose data is damaged is the one intact
// copy of that state: restore --fallback stores it again before it
// overwrites it, so the pre-restore snapshot gives back its exact bytes,
// and cat finds the damaged state intact again (its copy was replaced).
func TestFallbackRestoreKeepsTheOnlyIntactCopy(t *testing.T) {
	b := newBinEnv(t)
	s := newHostSession(t, b, 4)
	s.corrupt(4)

	r := b.ok("restore", s.dir, "@1", "--fallback", "--json")
	fallbackWarning(t, r.err, s.ids[2], s.ids[3])
	res := jsonOf[map[string]any](t, r.out)
	pre, _ := res["pre_restore_id"].(string)
	if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); res["restored_to"] != s.ids[2] || pre == "" || string(got) != stepState(3) {
		t.Fatalf("restore --fallback over the one intact copy: %v, %q", res, got)
	}
	b.ok("restore", s.dir, pre)
	if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); string(got) != stepState(4) {
		t.Fatalf("the pre-restore snapshot gave back %q, want %q", got, stepState(4))
	}
	doc := jsonOf[catDoc](t, b.ok("cat", s.dir, s.ids[3], "checkpoint.json", "--fallback", "--json").out)
	if doc.ID != s.ids[3] || doc.Content == nil || *doc.Content != stepState(4) || len(doc.Tried) != 0 {
		t.Fatalf("cat --fallback of the healed state: %+v", doc)
	}
}

// AC6: every state kept is corrupt: cat and restore --fallback exit 1
// with the count of snapshots tried, and restore changes nothing.
func TestFallbackAllStatesCorrupt(t *testing.T) {
	b := newBinEnv(t)
	s := newHostSession(t, b, 12)
	for _, p := range s.packFiles() {
		junkFile(t, p)
	}
	before := b.ok("list", s.dir, "--json").out

	for _, args := range [][]string{{"cat", s.dir, "@1", "checkpoint.json", "--fallback"}, {"cat", s.dir, "@1", "checkpoint.json", "--fallback", "--check", "json", "--json"}} {
		if r := b.run(args...); r.code != 1 || r.err != "casckpt: no intact copy of checkpoint.json (tried 10 snapshots)\n" {
			t.Fatalf("casckpt %q with every state corrupt: exit %d, stderr %q", args, r.code, r.err)
		}
	}
	writeFiles(t, s.dir, map[string]string{"checkpoint.json": "{}\n"})
	real, err := filepath.EvalSymlinks(s.dir)
	must(t, err)
	if r := b.run("restore", s.dir, "@1", "--fallback"); r.code != 1 || r.err != "casckpt: no intact copy of "+real+" (tried 10 snapshots)\n" {
		t.Fatalf("restore --fallback with every state corrupt: exit %d, stderr %q", r.code, r.err)
	}
	if got, _ := os.ReadFile(filepath.Join(s.dir, "checkpoint.json")); string(got) != "{}\n" {
		t.Fatalf("a refused restore --fallback changed the tree: %q", got)
	}
	if after := b.ok("list", s.dir, "--json").out; after != before {
		t.Fatalf("a refused restore --fallback changed the list:\n%s\nwas\n%s", after, before)
	}
}

// --check json: the data is intact, but the newest state was captured
// half written: it is passed over for the newest one that parses.
func TestFallbackCheckJSONPassesOverTruncatedState(t *testing.T) {
	b := newBinEnv(t)
	s := newHostSession(t, b, 3)
	truncated := stepState(4)[:20]
	s.step(truncated)

	doc := jsonOf[catDoc](t, b.ok("cat", s.dir, "@1", "checkpoint.json", "--fallback", "--json").out)
	if doc.ID != s.ids[3] || doc.Content == nil || *doc.Content != truncated || len(doc.Tried) != 0 || doc.Tried == nil {
		t.Fatalf("cat --fallback without --check of an intact state: %+v", doc)
	}
	r := b.ok("cat", s.dir, "@1", "checkpoint.json", "--fallback", "--check", "json", "--json")
	doc = jsonOf[catDoc](t, r.out)
	if doc.ID != s.ids[2] || doc.Content == nil || *doc.Content != stepState(3) || len(doc.Tried) != 1 ||
		doc.Tried[0].ID != s.ids[3] || !strings.Contains(doc.Tried[0].Reason, "checkpoint.json does not parse as JSON") {
		t.Fatalf("cat --fallback --check json: %+v", doc)
	}
	if strings.Count(r.err, "\n") != 1 || !strings.Contains(r.err, "used snapshot "+s.ids[2][:12]) || !strings.Contains(r.err, "does not parse as JSON") {
		t.Fatalf("cat --fallback --check json: stderr %q", r.err)
	}
	if doc, ok := jsonOf[map[string]any](t, b.ok("restore", s.dir, "@2", "--fallback", "--json").out)["tried"].([]any); !ok || len(doc) != 0 {
		t.Fatalf("restore --fallback of an intact snapshot: tried is %v, want []", doc)
	}
	if _, ok := jsonOf[map[string]any](t, b.ok("restore", s.dir, "@2", "--json").out)["tried"]; ok {
		t.Fatal("restore without --fallback gives tried")
	}
	for _, args := range [][]string{{"--check", "json"}, {"--fallback", "--check", "yaml"}} {
		if r := b.run(append([]string{"cat", s.dir, "@1", "checkpoint.json"}, args...)...); r.code != 2 {
			t.Fatalf("cat %v: exit %d, want 2", args, r.code)
		}
	}
}

// An older snapshot that lacks PATH is passed over too; when no snapshot
// is left, cat --json prints the error document with the count.
func TestFallbackPassesOverASnapshotWithoutThePath(t *testing.T) {
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "session")
	writeFiles(t, dir, map[string]string{"notes.txt": "no state yet\n"})
	first := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--json").out)["id"].(string)
	must(t, os.Remove(filepath.Join(dir, "notes.txt")))
	writeFiles(t, dir, map[string]string{"checkpoint.json": `{"iteration": `})
	second := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--json").out)["id"].(string)

	r := b.run("cat", dir, "@1", "checkpoint.json", "--fallback", "--check", "json", "--json")
	doc := jsonOf[map[string]any](t, r.out)
	if r.code != 1 || r.err != "casckpt: no intact copy of checkpoint.json (tried 2 snapshots)\n" ||
		doc["error"] != "no intact copy of checkpoint.json (tried 2 snapshots)" || doc["exit"] != 1.0 {
		t.Fatalf("cat --fallback with no copy left: exit %d, %q, %v", r.code, r.err, doc)
	}
	if r := b.run("cat", dir, "@1", "notes.txt", "--fallback"); r.code != 1 || !strings.Contains(r.err, "notes.txt: not found in snapshot "+second[:12]) {
		t.Fatalf("cat --fallback of a path SNAP lacks: exit %d, %q (the first snapshot %s has it, but SNAP's own lack is no damage)", r.code, r.err, first[:12])
	}
}
