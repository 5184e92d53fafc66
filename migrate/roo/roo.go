// Package roo imports the checkpoints of Roo Code (the VS Code extension
// rooveterinaryinc.roo-cline, also in Cursor and Windsurf) from the
// editor's globalStorage directory, with no git program (see gitimport).
//
// Roo Code keeps a shadow git repository per task,
// tasks/<taskId>/checkpoints/.git, whose work tree (core.worktree) is the
// project and whose commits are named "Task: <taskId>, Time: <ms>" after
// an "initial commit" (see migrate/internal/agentrepo for the source this
// relies on). Each such checkpoints directory is a unit, deleted whole by
// ClearLegacy once imported (never the task's conversation beside it).
// Each checkpoint commit is labelled session "roo:<taskId>" and turn the
// timestamp of the "checkpoint_saved" message of
// tasks/<taskId>/ui_messages.json whose text is its hash, else the
// commit's time in milliseconds. Empty commits record no snapshot.
package roo

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/internal/agentrepo"
)

// ExtensionID is the name of Roo Code's directory under globalStorage.
const ExtensionID = "rooveterinaryinc.roo-cline"

// KindTask is Roo Code's layout: one repository per task
// (gitimport.Source.Kind).
const KindTask gitimport.Kind = "task"

// agent names Roo Code in reasons and sessions.
const agent = "roo"

// finder finds Roo Code's shadow repositories under a globalStorage
// directory.
type finder struct{ ext string }

var _ gitimport.Finder = finder{}

func newFinder(globalStorage string) finder {
	return finder{ext: filepath.Join(globalStorage, ExtensionID)}
}

// Candidates lists the per-task repositories.
func (f finder) Candidates() ([]string, error) { return agentrepo.TaskRepos(f.ext) }

// Read reads one per-task repository.
func (f finder) Read(p string) (gitimport.Unit, bool) {
	taskDir := filepath.Dir(p)
	session := agentrepo.Session(agent, filepath.Base(taskDir))
	var turns agentrepo.Turns // read on the first checkpoint labelled
	return agentrepo.Read(p, KindTask, agent, func(c gitimport.CommitInfo) (string, string) {
		if session == "" || !strings.HasPrefix(c.Message, "Task: ") {
			return "", ""
		}
		if turns == nil {
			turns = agentrepo.ReadTurns(taskDir, func(m agentrepo.Message) string {
				if m.Say != "checkpoint_saved" {
					return ""
				}
				return m.Text
			})
		}
		return session, turns.Turn(c)
	})
}

// Run imports every commit of Roo Code's repositories under globalStorage
// that is not imported yet (gitimport.Run). It never writes there.
func Run(ctx context.Context, store gitimport.Importer, globalStorage string, opts gitimport.Options) (gitimport.Report, error) {
	return gitimport.Run(ctx, store, newFinder(globalStorage), opts)
}

// Status lists Roo Code's repositories under globalStorage with their
// size and whether they are fully imported (gitimport.Status).
func Status(ctx context.Context, store gitimport.Importer, globalStorage string) ([]gitimport.UnitStatus, error) {
	return gitimport.Status(ctx, store, newFinder(globalStorage))
}

// ClearLegacy deletes, each whole, Roo Code's repositories under
// globalStorage that are fully imported (gitimport.Clear).
func ClearLegacy(ctx context.Context, store gitimport.Importer, globalStorage string, dryRun bool) (deleted, kept []string, bytesFreed int64, err error) {
	return gitimport.Clear(ctx, store, newFinder(globalStorage), dryRun)
}
