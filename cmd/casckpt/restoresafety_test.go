package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSafeRestoreKeepsWhatIsExcludedNow: an agent's turn deleted big.txt
// and notes.md; then a person made a big.txt past the size limit and a
// private notes.md listed in .gitignore. Absent is what the agent left
// them in, but the scan excludes them now: a safe restore keeps both as
// they are and says why, and restores the agent's edit.
func TestSafeRestoreKeepsWhatIsExcludedNow(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a0", "big.txt": "small", "notes.md": "shared notes"})
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--max-file-size-mb", "1", "--turn", "t1", "--json").out)["id"].(string)
	writeFiles(t, dir, map[string]string{"a.txt": "agent"})
	must(t, os.Remove(filepath.Join(dir, "big.txt")))
	must(t, os.Remove(filepath.Join(dir, "notes.md")))
	b.ok("snapshot", dir, "--max-file-size-mb", "1", "--turn", "t1", "--end-turn")
	big := strings.Repeat("a person's data\n", 1<<17) // 2 MiB
	writeFiles(t, dir, map[string]string{"big.txt": big, "notes.md": "private", ".gitignore": "notes.md\n"})

	r := b.ok("restore", dir, snap, "--safe", "--json")
	res := jsonOf[safeRestoreJSON](t, r.out)
	want := []keptJSON{{".gitignore", "not changed by an agent since the snapshot"}, {"big.txt", "excluded now"}, {"notes.md", "excluded now"}}
	if res.Safe == nil || !*res.Safe || !slices.Equal(res.Kept, want) {
		t.Fatalf("restore --safe kept %+v, want %+v", res.Kept, want)
	}
	sameFiles(t, dir, map[string]string{"a.txt": "a0", "big.txt": big, "notes.md": "private", ".gitignore": "notes.md\n"})
}

// TestRestoreKeepsWhatItOverwritesInThePreRestoreSnapshot: a plain
// restore puts back a file that grew past the size limit and one ignored
// since; the pre-restore snapshot holds the bytes it overwrote, whatever
// their size or ignore state, and restoring it brings them back.
func TestRestoreKeepsWhatItOverwritesInThePreRestoreSnapshot(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"data.json": `{"small": true}`, "notes/todo.md": "v0", "notes/other.md": "o"})
	snap := jsonOf[map[string]any](t, b.ok("snapshot", dir, "--max-file-size-mb", "1", "--json").out)["id"].(string)
	big := strings.Repeat("grown\n", 1<<19) // 3 MiB
	writeFiles(t, dir, map[string]string{"data.json": big, "notes/todo.md": "private v1", "notes/mine.md": "mine", ".gitignore": "notes/\n"})

	res := jsonOf[map[string]any](t, b.ok("restore", dir, snap, "--json").out)
	pre, _ := res["pre_restore_id"].(string)
	if pre == "" {
		t.Fatalf("no pre-restore snapshot: %v", res)
	}
	// .gitignore is not ignored: the snapshot lacks it, so it is deleted.
	sameFiles(t, dir, map[string]string{"data.json": `{"small": true}`, "notes/todo.md": "v0", "notes/other.md": "o",
		"notes/mine.md": "mine"})
	for p, want := range map[string]string{"data.json": big, "notes/todo.md": "private v1"} {
		if got := b.run("cat", dir, pre, p); got.code != 0 || got.out != want {
			t.Fatalf("the pre-restore snapshot's %s: exit %d, %d bytes, stderr %q", p, got.code, len(got.out), got.err)
		}
	}
	// What it captured though excluded is only what the restore wrote over.
	if got := b.run("cat", dir, pre, "notes/mine.md"); got.code == 0 {
		t.Fatal("the pre-restore snapshot holds an ignored file the restore never touched")
	}
	b.ok("restore", dir, pre)
	for p, want := range map[string]string{"data.json": big, "notes/todo.md": "private v1", ".gitignore": "notes/\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != want {
			t.Fatalf("restoring the pre-restore snapshot: %s holds %d bytes (%v)", p, len(got), err)
		}
	}
}

// duringApply makes every restore and undo run by e call fn between its
// plan and its writes, until the test ends.
func duringApply(t *testing.T, fn func()) {
	beforeApply = fn
	t.Cleanup(func() { beforeApply = nil })
}

// TestRestoreLeavesWhatIsSavedDuringIt: files saved, made or replaced
// after the restore's scan (between its plan and its writes) are left as
// they are and reported; the rest is restored.
func TestRestoreLeavesWhatIsSavedDuringIt(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(fmt.Sprint("safe=", safe), func(t *testing.T) {
			e := newEnv(t)
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a": "a0", "b": "b0", "c": "c0", "link": "", "d/x": "x0"})
			must(t, os.Remove(filepath.Join(dir, "link")))
			must(t, os.Symlink("a", filepath.Join(dir, "link")))
			snap := jsonOf[map[string]any](t, e.ok("snapshot", dir, "--json").out)["id"].(string)
			// Everything below is what an agent did: a safe restore would
			// put it all back.
			writeFiles(t, dir, map[string]string{"a": "a1", "b": "b1", "e": "e1", "f": "f1"})
			must(t, os.Remove(filepath.Join(dir, "c")))
			must(t, os.Remove(filepath.Join(dir, "link")))
			must(t, os.Symlink("b", filepath.Join(dir, "link")))
			must(t, os.RemoveAll(filepath.Join(dir, "d")))
			e.ok("record-write", dir, "a", "b", "c", "e", "f", "link", "d/x")
			duringApply(t, func() {
				writeFiles(t, dir, map[string]string{
					"a":   "saved during the restore", // to be rewritten
					"c":   "made during the restore",  // to be made
					"e":   "e, saved during the restore",
					"d/x": "x, made during the restore", // in a directory to be made
				})
				must(t, os.Remove(filepath.Join(dir, "link"))) // to be replaced
				must(t, os.Symlink("elsewhere", filepath.Join(dir, "link")))
			})
			args := []string{"restore", dir, snap, "--json"}
			if safe {
				args = append(args, "--safe")
			}
			r := e.ok(args...)
			doc := jsonOf[struct {
				Written, Deleted int
				Skipped          []string
				Kept             []keptJSON
			}](t, r.out)
			left := []string{"a", "c", "d/x", "e", "link"}
			if slices.Sort(doc.Skipped); !slices.Equal(doc.Skipped, left) || doc.Written != 1 || doc.Deleted != 1 {
				t.Fatalf("skipped %q, %d written, %d deleted; want %q, 1 (b) and 1 (f)", doc.Skipped, doc.Written, doc.Deleted, left)
			}
			for _, p := range left {
				if !strings.Contains(r.err, "warning: "+p+" left alone: changed during restore\n") {
					t.Errorf("stderr does not name %s: %q", p, r.err)
				}
			}
			if safe {
				var kept []string
				for _, k := range doc.Kept {
					if k.Reason == "changed during restore" {
						kept = append(kept, k.Path)
					}
				}
				if slices.Sort(kept); !slices.Equal(kept, left) {
					t.Errorf("kept %+v, want %q changed during restore", doc.Kept, left)
				}
			}
			if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "elsewhere" {
				t.Errorf("link: %q %v, want the link made during the restore", target, err)
			}
			must(t, os.Remove(filepath.Join(dir, "link")))
			sameFiles(t, dir, map[string]string{"a": "saved during the restore", "b": "b0", "c": "made during the restore",
				"e": "e, saved during the restore", "d/x": "x, made during the restore"})
		})
	}
}

// TestUndoLeavesWhatIsSavedDuringIt: a file the turn changed that is
// saved between the undo's plan and its writes is left as it is and
// reported as a conflict; the rest of the turn is reverted.
func TestUndoLeavesWhatIsSavedDuringIt(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"})
	e.ok("snapshot", dir, "--turn", "t1")
	writeFiles(t, dir, map[string]string{"a.txt": "agent\n", "b.txt": "agent\n", "new.txt": "agent\n"})
	e.ok("snapshot", dir, "--turn", "t1", "--end-turn")
	duringApply(t, func() {
		writeFiles(t, dir, map[string]string{"a.txt": "a person's save during the undo\n", "new.txt": "kept, saved during the undo\n"})
	})
	res := jsonOf[struct {
		Reverted  []string
		Conflicts []keptJSON
	}](t, e.ok("undo", dir, "t1", "--json").out)
	want := []keptJSON{{"a.txt", "changed during restore"}, {"new.txt", "changed during restore"}}
	if !slices.Equal(res.Reverted, []string{"b.txt"}) || !slices.Equal(res.Conflicts, want) {
		t.Fatalf("undo: reverted %q, conflicts %+v; want [b.txt] and %+v", res.Reverted, res.Conflicts, want)
	}
	sameFiles(t, dir, map[string]string{"a.txt": "a person's save during the undo\n", "b.txt": "b0\n", "new.txt": "kept, saved during the undo\n"})
}

// TestConcurrentUndosOfTurnsThatShareAFile: two turns changed different
// lines of one file; undos of both, started at once as two processes,
// each revert their turn's line, however they interleave: they run one
// at a time, and the second plans from what the first left.
func TestConcurrentUndosOfTurnsThatShareAFile(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	b := newBinEnv(t)
	for round := range rounds {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"notes.txt": tenLines()})
		agentTurn(t, b, dir, "t1", map[string]string{"notes.txt": tenLines(2, "t1")})
		agentTurn(t, b, dir, "t2", map[string]string{"notes.txt": tenLines(2, "t1", 9, "t2")})
		cmds := []*exec.Cmd{b.command("undo", dir, "t1", "--json"), b.command("undo", dir, "t2", "--json")}
		outs := make([]bytes.Buffer, len(cmds))
		for i, c := range cmds {
			c.Stdout = &outs[i]
			must(t, c.Start())
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("round %d: undo %d: %v", round, i+1, err)
			}
			res := jsonOf[struct{ Reverted, Merged []string }](t, outs[i].String())
			if got := append(res.Reverted, res.Merged...); !slices.Equal(got, []string{"notes.txt"}) {
				t.Fatalf("round %d: undo %d reverted %q, merged %q", round, i+1, res.Reverted, res.Merged)
			}
		}
		if got := readFiles(t, dir)["notes.txt"]; got != tenLines() {
			t.Fatalf("round %d: both undos reported notes.txt reverted, but it holds:\n%s", round, got)
		}
	}
}
