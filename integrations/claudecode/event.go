package claudecode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/casckpt/casckpt"
)

// writeTools are the Claude Code tools that write the file their input
// names; checkpointTools are those before which a project is snapshotted.
var (
	writeTools      = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}
	checkpointTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true}
)

// Event is the part of a Claude Code hook event the hook reads; other
// fields are ignored.
type Event struct {
	SessionID string           `json:"session_id"`
	Cwd       casckpt.JSONPath `json:"cwd"`
	Name      string           `json:"hook_event_name"`
	PromptID  string           `json:"prompt_id"`
	Prompt    string           `json:"prompt"`
	Source    string           `json:"source"` // SessionStart's: startup, resume, clear or compact
	ToolName  string           `json:"tool_name"`
	ToolInput json.RawMessage  `json:"tool_input"`
}

// toolInput is the part of a tool's input that names what it writes.
type toolInput struct {
	FilePath     casckpt.JSONPath `json:"file_path"`
	NotebookPath casckpt.JSONPath `json:"notebook_path"`
}

// run is one event being acted on.
type run struct {
	ctx                 context.Context
	store               *casckpt.Store
	ev                  Event
	now                 func() time.Time
	keepTurns, keepDays int
}

// promptSubmit ends the session's open turns (see interrupt) and starts
// the prompt's turn in the project at cwd, titled with its first line.
func (r run) promptSubmit() error {
	turns, err := r.store.SessionTurns(r.ctx, r.ev.SessionID)
	if err != nil {
		return err
	}
	turn := r.ev.PromptID
	if turn == "" {
		sum := sha256.New()
		fmt.Fprintf(sum, "%s\x00%s\x00%d\x00%d", r.ev.SessionID, r.ev.Prompt, r.now().UnixNano(), len(turns))
		turn = "p-" + hex.EncodeToString(sum.Sum(nil))[:16]
	}
	project, err := r.store.Root(r.ctx, string(r.ev.Cwd))
	if err != nil {
		return err
	}
	ended := r.interrupt(turns, turn)
	opts := r.options(turn, "claude-code: prompt submitted")
	opts.Title = r.ev.Prompt
	if _, err = r.store.Snapshot(r.ctx, project, opts); err != nil {
		return errors.Join(ended, err)
	}
	if ended != nil {
		return endError{ended}
	}
	return nil
}

// endError is the failure to end an earlier turn, the prompt's own
// checkpoint having been taken: logged, not told to the user.
type endError struct{ error }

func (e endError) Unwrap() error { return e.error }

// interrupt ends the session's open turns but turn, each in every project
// where it is open, marked interrupted: Claude Code sends no Stop for a
// prompt the user interrupted, so the next prompt, or the session's start
// or end, closes it. Taken just before the next prompt's first snapshot,
// the end is the snapshot that starts it unless the tree changed between.
func (r run) interrupt(turns []casckpt.SessionTurn, turn string) error {
	var errs []error
	for _, t := range turns {
		if t.Open && t.ID != turn {
			opts := r.options(t.ID, "claude-code: turn interrupted")
			opts.EndTurn, opts.Interrupted = true, true
			_, err := r.store.Snapshot(r.ctx, t.Project, opts)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// preToolUse snapshots, once per prompt, the session's project (at cwd)
// and the project of the file the tool writes when that is another one
// and really a project: a directory the store knows or one with a root
// marker. A file elsewhere (a scratch file in /tmp, a ../ path) is logged,
// not snapshotted: its directory may be large, and is nobody's project.
func (r run) preToolUse() error {
	session, err := r.store.Root(r.ctx, string(r.ev.Cwd))
	if err != nil {
		return err
	}
	projects := []string{session}
	var scratch error
	if path := r.target(); path != string(r.ev.Cwd) {
		root, found, err := r.store.FindRoot(r.ctx, path)
		switch {
		case err != nil:
			return err
		case found && root != session:
			projects = append(projects, root)
		case !found && root != session && !within(root, session): // root: path's directory
			scratch = fmt.Errorf("%s of %s: in no project (no root marker, not a known project): not snapshotted", r.ev.ToolName, path)
		}
	}
	turns, err := r.store.SessionTurns(r.ctx, r.ev.SessionID)
	if err != nil {
		return err
	}
	turn := r.promptOf(turns)
	errs := []error{scratch}
	for _, project := range projects {
		if turn != "" && slices.ContainsFunc(turns, func(t casckpt.SessionTurn) bool { return t.ID == turn && t.Project == project }) {
			continue // already checkpointed in this prompt
		}
		errs = append(errs, r.snapshot(project, turn, false, "claude-code: before "+r.ev.ToolName))
	}
	return errors.Join(errs...)
}

// within reports whether path lies strictly inside dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// postToolUse records the file a write tool wrote.
func (r run) postToolUse() error {
	if !writeTools[r.ev.ToolName] {
		return nil
	}
	path := r.target()
	if path == string(r.ev.Cwd) {
		return fmt.Errorf("%s names no file_path or notebook_path: nothing to record", r.ev.ToolName)
	}
	project, err := r.store.Root(r.ctx, path)
	if err != nil {
		return err
	}
	_, err = r.store.RecordWrite(r.ctx, project, path)
	return err
}

// stop ends the prompt's turn in every project where it started; where
// something ended it before (an event taken for an interruption), its end
// moves to the Stop's snapshot, no longer interrupted.
func (r run) stop() error {
	turns, err := r.store.SessionTurns(r.ctx, r.ev.SessionID)
	if err != nil {
		return err
	}
	turn := r.promptOf(turns)
	var errs []error
	for _, t := range turns {
		if t.ID == turn {
			errs = append(errs, r.snapshot(t.Project, turn, true, "claude-code: stop"))
		}
	}
	return errors.Join(errs...)
}

// promptOf returns the prompt the event belongs to: its prompt_id, else
// its session's newest (turns is newest first); "" when there is none.
func (r run) promptOf(turns []casckpt.SessionTurn) string {
	if r.ev.PromptID != "" || len(turns) == 0 {
		return r.ev.PromptID
	}
	return turns[0].ID
}

// target is the path the tool works on: its file_path or notebook_path,
// absolute (relative to cwd), else cwd.
func (r run) target() string {
	var in toolInput
	if json.Unmarshal(r.ev.ToolInput, &in) != nil {
		return string(r.ev.Cwd)
	}
	p := string(in.FilePath)
	if p == "" {
		p = string(in.NotebookPath)
	}
	if p == "" {
		return string(r.ev.Cwd)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(string(r.ev.Cwd), p)
	}
	return p
}

// options are the options of a hook snapshot labelled with the session
// and turn: it keeps turns, not a count of snapshots.
func (r run) options(turn, reason string) casckpt.SnapshotOptions {
	return casckpt.SnapshotOptions{Reason: reason, Session: r.ev.SessionID, Turn: turn, KeepTurns: r.keepTurns, KeepDays: r.keepDays}
}

// snapshot snapshots project, labelled with the session and turn.
func (r run) snapshot(project, turn string, end bool, reason string) error {
	opts := r.options(turn, reason)
	opts.EndTurn = end
	_, err := r.store.Snapshot(r.ctx, project, opts)
	return err
}
