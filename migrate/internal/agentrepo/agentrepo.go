// Package agentrepo holds what the readers of other agents' shadow git
// repositories share: listing them (Subdirs), labelling sessions, and for
// the VS Code agents Cline and Roo Code (one code base, forked) reading
// a repository whose work tree (core.worktree) is the project (Read) and
// each task's ui_messages.json, which names the checkpoint commit of the
// messages that made one (ReadTurns).
//
// The layouts, as those tools' source writes them:
//   - cline/cline src/integrations/checkpoints/CheckpointUtils.ts
//     (getShadowGitPath: globalStorage/checkpoints/<cwdHash>/.git;
//     hashWorkingDir) and CheckpointGitOperations.ts (initShadowGit: git
//     init, core.worktree = the workspace, "initial commit"
//     --allow-empty); CheckpointTracker.ts (commit: message
//     "checkpoint-<cwdHash>-<taskId>", --allow-empty; the message's
//     lastCheckpointHash, older ones prefixed "HEAD ").
//   - RooCodeInc/Roo-Code src/services/checkpoints
//     (RepoPerTaskCheckpointService: globalStorage/tasks/<taskId>/checkpoints;
//     ShadowCheckpointService: the same init) and src/core/checkpoints
//     (checkpointSave: "Task: <taskId>, Time: <ms>"; a "checkpoint_saved"
//     message whose text is the commit hash).
package agentrepo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/migrate/gitimport"
)

// maxMessages bounds the size of a ui_messages.json read: a larger one is
// not read (its checkpoints then take their commit's time as turn).
const maxMessages = 64 << 20

// Message is what is read of a message of ui_messages.json.
type Message struct {
	TS                 int64  `json:"ts"`
	Say                string `json:"say"`
	Text               string `json:"text"`
	LastCheckpointHash string `json:"lastCheckpointHash"`
}

// Turns maps checkpoint commits to the timestamp (ms) of the message that
// made each.
type Turns map[string]int64

// ReadTurns reads the ui_messages.json of the task directory taskDir and
// maps the commit hashOf names for each message (lower case; "" for none)
// to its timestamp, the first message naming a commit winning. A missing,
// oversized or unreadable file maps nothing.
func ReadTurns(taskDir string, hashOf func(Message) string) Turns {
	t := Turns{}
	f, err := os.Open(filepath.Join(taskDir, "ui_messages.json"))
	if err != nil {
		return t
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMessages+1))
	if err != nil || len(b) > maxMessages {
		return t
	}
	var msgs []Message
	if json.Unmarshal(b, &msgs) != nil {
		return t
	}
	for _, m := range msgs {
		h := strings.ToLower(strings.TrimSpace(hashOf(m)))
		if _, seen := t[h]; h != "" && !seen && m.TS > 0 {
			t[h] = m.TS
		}
	}
	return t
}

// Turn returns the turn of the commit c: the timestamp of the message
// naming it (in full, or abbreviated to 7 or more hex digits), else the
// commit's time, in decimal milliseconds.
func (t Turns) Turn(c gitimport.CommitInfo) string {
	if ts, ok := t[c.Hash]; ok {
		return strconv.FormatInt(ts, 10)
	}
	for h, ts := range t {
		if len(h) >= 7 && strings.HasPrefix(c.Hash, h) {
			return strconv.FormatInt(ts, 10)
		}
	}
	return strconv.FormatInt(c.Time.UnixMilli(), 10)
}

// Session returns the session label agent:taskID, or "" when that is no
// valid label.
func Session(agent, taskID string) string {
	s := agent + ":" + taskID
	if taskID == "" || casckpt.CheckLabel(s) != nil {
		return ""
	}
	return s
}

// TaskRepos lists the per-task shadow repositories under the extension
// directory ext, tasks/<taskId>/checkpoints, that hold a .git directory, in
// name order. A missing directory holds none.
func TaskRepos(ext string) ([]string, error) {
	return Subdirs(filepath.Join(ext, "tasks"), "checkpoints")
}

// Subdirs lists the directories directly under dir, each joined with sub,
// that hold a .git directory, in name order, leaving out symbolic links. A
// missing dir holds none.
func Subdirs(dir, sub string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agent checkpoints: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name(), sub)
		if st, err := os.Lstat(filepath.Join(p, ".git")); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out, nil
}

// Read reads the shadow repository at dir (dir/.git, its work tree the
// project as core.worktree names it) as one unit of kind, whose project's
// commits agent labels with label.
func Read(dir string, kind gitimport.Kind, agent string, label func(gitimport.CommitInfo) (string, string)) (gitimport.Unit, bool) {
	gitDir := filepath.Join(dir, ".git")
	if !gitimport.IsGitDir(gitDir) {
		return gitimport.Unit{}, false
	}
	s := &gitimport.Source{Path: gitDir, Dir: dir, Unit: dir, Kind: kind}
	refs, err := gitimport.ReadRefs(gitDir)
	wt, werr := gitimport.ReadWorktree(gitDir)
	var workdir string
	if werr == nil {
		workdir, werr = gitimport.CleanWorkdir(wt)
	}
	switch {
	case err != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: %v", gitDir, err))
	case werr != nil:
		s.Problems = append(s.Problems, fmt.Sprintf("%s: core.worktree: %v", gitDir, werr))
		s.Unowned = refs
	case len(refs) > 0:
		p := gitimport.NewProject(workdir, refs)
		p.Agent, p.Label = agent, label
		s.Projects = append(s.Projects, p)
	}
	return gitimport.Unit{Path: dir, Sources: []*gitimport.Source{s}}, true
}
