// Package cline imports the checkpoints of Cline (the VS Code extension
// saoudrizwan.claude-dev, also in Cursor and Windsurf) from the editor's
// globalStorage directory, with no git program (see gitimport).
//
// Cline keeps its checkpoints in shadow git repositories whose work tree
// (core.worktree) is the project (see migrate/internal/agentrepo for the
// source this relies on):
//   - the current store, one repository per working directory,
//     checkpoints/<cwdHash>/.git, whose commits are named
//     "checkpoint-<cwdHash>-<taskId>" (the interim generation kept a
//     branch per task, task-<taskId>, in it);
//   - the older one, a repository per task,
//     tasks/<taskId>/checkpoints/.git, whose commits are named "checkpoint".
//
// Each such directory is a unit, deleted whole by ClearLegacy once
// imported (never the task's conversation beside it). Each commit of a
// task is labelled session "cline:<taskId>" and turn the timestamp of the
// message of tasks/<taskId>/ui_messages.json whose lastCheckpointHash
// names it, else the commit's time in milliseconds; the first commit of a
// repository ("initial commit") has no label. Empty commits (made with
// --allow-empty) record no snapshot.
package cline

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/internal/agentrepo"
)

// ExtensionID is the name of Cline's directory under globalStorage.
const ExtensionID = "saoudrizwan.claude-dev"

// The layouts of Cline's repositories (gitimport.Source.Kind).
const (
	// KindWorkdir is the current store: one repository per workdir.
	KindWorkdir gitimport.Kind = "workdir"
	// KindTask is the older store: one repository per task.
	KindTask gitimport.Kind = "task"
)

// agent names Cline in reasons and sessions.
const agent = "cline"

// finder finds Cline's shadow repositories under a globalStorage directory.
type finder struct {
	ext   string // <globalStorage>/saoudrizwan.claude-dev
	turns map[string]agentrepo.Turns
}

var _ gitimport.Finder = (*finder)(nil)

func newFinder(globalStorage string) *finder {
	return &finder{ext: filepath.Join(globalStorage, ExtensionID), turns: map[string]agentrepo.Turns{}}
}

// Candidates lists the per-workdir repositories, then the per-task ones.
func (f *finder) Candidates() ([]string, error) {
	cur, err := agentrepo.Subdirs(filepath.Join(f.ext, "checkpoints"), "")
	if err != nil {
		return nil, err
	}
	old, err := agentrepo.TaskRepos(f.ext)
	return append(cur, old...), err
}

// Read reads one repository of either layout.
func (f *finder) Read(p string) (gitimport.Unit, bool) {
	if filepath.Dir(p) == filepath.Join(f.ext, "checkpoints") {
		return agentrepo.Read(p, KindWorkdir, agent, f.labelWorkdir)
	}
	taskID := filepath.Base(filepath.Dir(p))
	return agentrepo.Read(p, KindTask, agent, func(c gitimport.CommitInfo) (string, string) {
		if c.Message != "checkpoint" {
			return "", ""
		}
		return f.label(taskID, c)
	})
}

// labelWorkdir labels a commit of a per-workdir repository by the task
// its message names, "checkpoint-<cwdHash>-<taskId>".
func (f *finder) labelWorkdir(c gitimport.CommitInfo) (string, string) {
	rest, ok := strings.CutPrefix(c.Message, "checkpoint-")
	if !ok {
		return "", ""
	}
	_, taskID, ok := strings.Cut(rest, "-")
	if !ok {
		return "", ""
	}
	return f.label(taskID, c)
}

// label is the session and turn of commit c of task taskID.
func (f *finder) label(taskID string, c gitimport.CommitInfo) (string, string) {
	session := agentrepo.Session(agent, taskID)
	if session == "" {
		return "", ""
	}
	t, ok := f.turns[taskID]
	if !ok {
		t = agentrepo.ReadTurns(filepath.Join(f.ext, "tasks", taskID), func(m agentrepo.Message) string {
			return strings.TrimPrefix(m.LastCheckpointHash, "HEAD ")
		})
		f.turns[taskID] = t
	}
	return session, t.Turn(c)
}

// Run imports every commit of Cline's repositories under globalStorage
// that is not imported yet (gitimport.Run). It never writes there.
func Run(ctx context.Context, store gitimport.Importer, globalStorage string, opts gitimport.Options) (gitimport.Report, error) {
	return gitimport.Run(ctx, store, newFinder(globalStorage), opts)
}

// Status lists Cline's repositories under globalStorage with their size
// and whether they are fully imported (gitimport.Status).
func Status(ctx context.Context, store gitimport.Importer, globalStorage string) ([]gitimport.UnitStatus, error) {
	return gitimport.Status(ctx, store, newFinder(globalStorage))
}

// ClearLegacy deletes, each whole, Cline's repositories under
// globalStorage that are fully imported (gitimport.Clear).
func ClearLegacy(ctx context.Context, store gitimport.Importer, globalStorage string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	return gitimport.Clear(ctx, store, newFinder(globalStorage), dryRun)
}
