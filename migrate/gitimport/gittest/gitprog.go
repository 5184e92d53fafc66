package gittest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/casckpt/casckpt"
)

// Git runs the git program, to make a fixture as an agent's own code
// does; a test that reads the fixture back hides git (HideGit) first.
type Git struct {
	t    testing.TB
	home string
	// Clock is the author and committer time (Unix seconds) of the next
	// command; Tick moves it on.
	Clock int64
}

// NewGit returns a runner of git, or skips the test when there is none.
func NewGit(t testing.TB) *Git {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git program is needed to build the fixture")
	}
	return &Git{t: t, home: t.TempDir(), Clock: 1_700_000_000}
}

// Tick moves the clock on by a minute.
func (g *Git) Tick() { g.Clock += 60 }

// Run runs git in dir with env added to a clean environment (no global
// or system configuration) and returns its output, trimmed.
func (g *Git) Run(dir string, env []string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	when := fmt.Sprintf("@%d +0000", g.Clock)
	cmd.Env = append([]string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.home,
		"PATH=" + os.Getenv("PATH"), "GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when}, env...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		g.t.Fatalf("git %v: %v: %s", args, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// Commit is a commit as git reads it.
type Commit struct {
	Hash    string
	Author  int64 // Unix seconds
	Subject string
	// Changed: its tree differs from its first parent's (a root commit
	// has changed).
	Changed bool
	Files   map[string]File
}

// Log reads every commit reachable from HEAD of the repository at gitDir,
// oldest first, with its files, through git.
func (g *Git) Log(gitDir string) []Commit {
	g.t.Helper()
	env := []string{"GIT_DIR=" + gitDir}
	var out []Commit
	for _, line := range strings.Split(g.Run("", env, "log", "--reverse", "--format=%H %at %T %P"), "\n") {
		f := strings.Fields(line)
		at, _ := strconv.ParseInt(f[1], 10, 64)
		c := Commit{Hash: f[0], Author: at, Changed: len(f) < 4, Files: map[string]File{}}
		if len(f) >= 4 {
			c.Changed = g.Run("", env, "rev-parse", f[3]+"^{tree}") != f[2]
		}
		c.Subject = g.Run("", env, "log", "-1", "--format=%s", c.Hash)
		for _, e := range strings.Split(g.Run("", env, "ls-tree", "-r", "-z", "--full-tree", c.Hash), "\x00") {
			if e == "" {
				continue
			}
			info, p, _ := strings.Cut(e, "\t")
			fields := strings.Fields(info) // mode type hash
			kind := map[string]string{"100644": "file", "100755": "exec", "120000": "symlink"}[fields[0]]
			c.Files[p] = File{Kind: kind, Data: g.raw(env, "cat-file", "blob", fields[2])}
		}
		out = append(out, c)
	}
	return out
}

// raw runs git and returns its output untrimmed.
func (g *Git) raw(env []string, args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append([]string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.home}, env...)
	b, err := cmd.Output()
	if err != nil {
		g.t.Fatalf("git %v: %v", args, err)
	}
	return string(b)
}

// HideGit empties PATH for the rest of the test.
func HideGit(t *testing.T) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	if _, err := exec.LookPath("git"); err == nil {
		t.Fatal("git is still reachable")
	}
}

// DirDigest sums every name, mode, link target and file's bytes under
// dir: equal digests mean nothing there changed.
func DirDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00", p, info.Mode(), info.ModTime().UnixNano())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			h.Write([]byte(target))
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckHistory checks that the snapshots of project wd in s are, oldest
// first, the changed commits (Commit.Changed), each with its author time,
// reason prefix plus subject, and exactly its files (bytes, executable
// bits and links). It returns the snapshots, oldest first.
func CheckHistory(t *testing.T, s *casckpt.Store, wd string, commits []Commit, prefix string) []casckpt.ListEntry {
	t.Helper()
	list, err := s.List(context.Background(), wd, 0)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(list)
	var changed []Commit
	for _, c := range commits {
		if c.Changed {
			changed = append(changed, c)
		}
	}
	if len(list) != len(changed) {
		t.Fatalf("%s: %d snapshots, git has %d changed commits", wd, len(list), len(changed))
	}
	for i, c := range changed {
		snap := list[i]
		if snap.Time.Unix() != c.Author || snap.Reason != prefix+c.Subject {
			t.Errorf("commit %.8s: time %d reason %q, git has %d %q", c.Hash, snap.Time.Unix(), snap.Reason, c.Author, prefix+c.Subject)
		}
		files, _ := Snapshot(t, s, wd, snap.ID)
		if !maps.Equal(files, c.Files) {
			t.Errorf("commit %.8s: snapshot holds %v, git %v", c.Hash, files, c.Files)
		}
	}
	return list
}

// ReadFiles reads the files and links under dir as git would hold them
// (directories are implied by their contents).
func ReadFiles(t *testing.T, dir string) map[string]File {
	t.Helper()
	out := map[string]File{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[filepath.ToSlash(rel)] = File{Kind: "symlink", Data: target}
			return err
		}
		b, err := os.ReadFile(p)
		kind := "file"
		if info.Mode()&0o100 != 0 {
			kind = "exec"
		}
		out[filepath.ToSlash(rel)] = File{Kind: kind, Data: string(b)}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Shadow is a shadow repository in the style of Cline and Roo Code: a
// repository in Dir whose core.worktree is the project, Workdir; git runs
// in Dir, as simple-git does for them.
type Shadow struct {
	g            *Git
	Dir, Workdir string
}

// InitShadow makes it as both tools' initShadowGit do (cline/cline
// src/integrations/checkpoints/CheckpointGitOperations.ts; RooCodeInc/
// Roo-Code src/services/checkpoints/ShadowCheckpointService.ts): "git
// init", core.worktree the workspace, commit.gpgSign false, the tool's
// user.name and user.email, "git add . --ignore-errors" and "git commit
// -m 'initial commit' --allow-empty".
func (g *Git) InitShadow(dir, workdir, name, email string) *Shadow {
	g.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		g.t.Fatal(err)
	}
	g.Run(dir, nil, "init")
	g.Run(dir, nil, "config", "core.worktree", workdir)
	g.Run(dir, nil, "config", "commit.gpgSign", "false")
	g.Run(dir, nil, "config", "user.name", name)
	g.Run(dir, nil, "config", "user.email", email)
	s := &Shadow{g: g, Dir: dir, Workdir: workdir}
	s.Commit("initial commit", "--allow-empty")
	return s
}

// Commit ticks the clock, runs "git add . --ignore-errors" and "git commit
// -m msg" with flags, and returns the new HEAD.
func (s *Shadow) Commit(msg string, flags ...string) string {
	s.g.t.Helper()
	s.g.Tick()
	s.g.Run(s.Dir, nil, "add", ".", "--ignore-errors")
	s.g.Run(s.Dir, nil, append([]string{"commit", "-m", msg}, flags...)...)
	return s.g.Run(s.Dir, nil, "rev-parse", "HEAD")
}

// WriteFiles writes files (path: bytes) under dir, making directories.
func WriteFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WriteJSON writes v as JSON to path, making directories.
func WriteJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
