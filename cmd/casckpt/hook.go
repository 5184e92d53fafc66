package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
)

// hookWait bounds a hook's wait for a busy store, and for a silent server
// of an s3:// store (each request's silence, its tries included): it
// records the miss in the hook log rather than hold up the agent.
const hookWait = time.Second

// hookLogName is the hook log's file name in the store directory; past
// hookLogMax bytes it is moved aside to hookLogName.1.
const (
	hookLogName = "hook.log"
	hookLogMax  = 1 << 20
)

// writeTools are the Claude Code tools that write the file their input
// names; checkpointTools are those before which a project is snapshotted.
var (
	writeTools      = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}
	checkpointTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true}
)

func newHookCommand(g *globals) *cobra.Command {
	hook := &cobra.Command{
		Use:   "hook",
		Short: "act on an agent host's hook events",
		Args:  cobra.NoArgs,
	}
	hook.AddCommand(newClaudeCodeHookCommand(g))
	return hook
}

func newClaudeCodeHookCommand(g *globals) *cobra.Command {
	var printSettings bool
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "act on one Claude Code hook event read on stdin",
		Long: `claude-code reads one Claude Code hook event (JSON) on stdin and acts on it:
UserPromptSubmit starts a turn (session = session_id, turn = prompt_id) in
the project at cwd; PreToolUse of Write, Edit, MultiEdit, NotebookEdit or
Bash snapshots the project at cwd, and the project holding
tool_input.file_path when the store knows it or it has a root marker (a
file in no project is logged, not snapshotted), once per project per
prompt; PostToolUse of a write tool records the write; Stop ends
the turn in every project the prompt touched. Without a prompt_id, a prompt
gets the ID "p-" and 16 hex digits of a hash of its session, text, time
and the number of turns the store holds of the session, and a tool or Stop event belongs to its session's newest prompt, as
the store records it.

It always exits 0 and prints nothing on stdout; it waits at most a second
for a busy store, or for a silent server of an s3:// store. Failures and
misses go to hook.log in the store (for an s3:// store, in its cache
directory, $XDG_CACHE_HOME/casckpt), one line each. --print-settings prints the hooks block for .claude/settings.json.`,
		Args: cobra.NoArgs,
		// The hook never fails: a bad CASCKPT_NOW is logged, not refused.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			g.ran = true
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printSettings {
				return printHookSettings(g)
			}
			runHook(cmd.Context(), g)
			return nil
		},
	}
	cmd.Flags().BoolVar(&printSettings, "print-settings", false, "print the hooks block for .claude/settings.json")
	return cmd
}

// hookEvent is the part of a Claude Code hook event the hook reads; other
// fields are ignored.
type hookEvent struct {
	SessionID string           `json:"session_id"`
	Cwd       casckpt.JSONPath `json:"cwd"`
	Name      string           `json:"hook_event_name"`
	PromptID  string           `json:"prompt_id"`
	Prompt    string           `json:"prompt"`
	ToolName  string           `json:"tool_name"`
	ToolInput json.RawMessage  `json:"tool_input"`
}

// toolInput is the part of a tool's input that names what it writes.
type toolInput struct {
	FilePath     casckpt.JSONPath `json:"file_path"`
	NotebookPath casckpt.JSONPath `json:"notebook_path"`
}

// runHook reads one event from stdin and acts on it, logging any failure.
func runHook(ctx context.Context, g *globals) {
	name := "-"
	fail := func(err error) { g.hookLog(name, err) }
	if v := g.env("CASCKPT_NOW"); v != "" {
		t, err := parseNow(v)
		if err != nil {
			fail(err)
			return
		}
		g.now = func() time.Time { return t }
	}
	data, err := io.ReadAll(g.io.in)
	if err != nil {
		fail(fmt.Errorf("read the event: %w", err))
		return
	}
	if strings.TrimSpace(string(data)) == "" {
		fail(errors.New("empty stdin: no event to act on"))
		return
	}
	var ev hookEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		fail(fmt.Errorf("malformed event JSON: %w", err))
		return
	}
	name = oneLine(ev.Name)
	if err := g.hookEvent(ctx, ev); err != nil {
		fail(err)
	}
}

// hookEvent acts on ev; unknown events are ignored.
func (g *globals) hookEvent(ctx context.Context, ev hookEvent) error {
	switch ev.Name {
	case "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop":
	default:
		return nil
	}
	if ev.Name != "UserPromptSubmit" && ev.Name != "Stop" && !checkpointTools[ev.ToolName] {
		return nil
	}
	if ev.SessionID == "" || ev.Cwd == "" {
		return errors.New("the event has no session_id or cwd: nothing to attribute it to")
	}
	dir, err := g.storePath()
	if err != nil {
		return err
	}
	store, err := g.openAt(dir, casckpt.Options{Now: g.now, HomeDir: g.env("HOME"), LockTimeout: hookWait, S3Timeout: hookWait})
	if err != nil {
		return err
	}
	h := hookRun{ctx: ctx, store: store, ev: ev, now: g.now}
	switch ev.Name {
	case "UserPromptSubmit":
		return h.promptSubmit()
	case "PreToolUse":
		return h.preToolUse()
	case "PostToolUse":
		return h.postToolUse()
	}
	return h.stop()
}

// hookRun is one event being acted on.
type hookRun struct {
	ctx   context.Context
	store *casckpt.Store
	ev    hookEvent
	now   func() time.Time
}

// promptSubmit starts the prompt's turn in the project at cwd.
func (h hookRun) promptSubmit() error {
	turn := h.ev.PromptID
	if turn == "" {
		turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
		if err != nil {
			return err
		}
		sum := sha256.New()
		fmt.Fprintf(sum, "%s\x00%s\x00%d\x00%d", h.ev.SessionID, h.ev.Prompt, h.now().UnixNano(), len(turns))
		turn = "p-" + hex.EncodeToString(sum.Sum(nil))[:16]
	}
	project, err := h.store.Root(h.ctx, string(h.ev.Cwd))
	if err != nil {
		return err
	}
	return h.snapshot(project, turn, false, "claude-code: prompt submitted")
}

// preToolUse snapshots, once per prompt, the session's project (at cwd)
// and the project of the file the tool writes when that is another one
// and really a project: a directory the store knows or one with a root
// marker. A file elsewhere (a scratch file in /tmp, a ../ path) is logged,
// not snapshotted: its directory may be large, and is nobody's project.
func (h hookRun) preToolUse() error {
	session, err := h.store.Root(h.ctx, string(h.ev.Cwd))
	if err != nil {
		return err
	}
	projects := []string{session}
	var scratch error
	if path := h.target(); path != string(h.ev.Cwd) {
		root, found, err := h.store.FindRoot(h.ctx, path)
		switch {
		case err != nil:
			return err
		case found && root != session:
			projects = append(projects, root)
		case !found && root != session && !within(root, session): // root: path's directory
			scratch = fmt.Errorf("%s of %s: in no project (no root marker, not a known project): not snapshotted", h.ev.ToolName, path)
		}
	}
	turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
	if err != nil {
		return err
	}
	turn := h.promptOf(turns)
	errs := []error{scratch}
	for _, project := range projects {
		if turn != "" && slices.ContainsFunc(turns, func(t casckpt.SessionTurn) bool { return t.ID == turn && t.Project == project }) {
			continue // already checkpointed in this prompt
		}
		errs = append(errs, h.snapshot(project, turn, false, "claude-code: before "+h.ev.ToolName))
	}
	return errors.Join(errs...)
}

// postToolUse records the file a write tool wrote.
func (h hookRun) postToolUse() error {
	if !writeTools[h.ev.ToolName] {
		return nil
	}
	path := h.target()
	if path == string(h.ev.Cwd) {
		return fmt.Errorf("%s names no file_path or notebook_path: nothing to record", h.ev.ToolName)
	}
	project, err := h.store.Root(h.ctx, path)
	if err != nil {
		return err
	}
	_, err = h.store.RecordWrite(h.ctx, project, path)
	return err
}

// stop ends the prompt's turn in every project where it is open.
func (h hookRun) stop() error {
	turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
	if err != nil {
		return err
	}
	turn := h.promptOf(turns)
	var errs []error
	for _, t := range turns {
		if t.ID == turn && t.Open {
			errs = append(errs, h.snapshot(t.Project, turn, true, "claude-code: stop"))
		}
	}
	return errors.Join(errs...)
}

// promptOf returns the prompt the event belongs to: its prompt_id, else
// its session's newest (turns is newest first); "" when there is none.
func (h hookRun) promptOf(turns []casckpt.SessionTurn) string {
	if h.ev.PromptID != "" || len(turns) == 0 {
		return h.ev.PromptID
	}
	return turns[0].ID
}

// target is the path the tool works on: its file_path or notebook_path,
// absolute (relative to cwd), else cwd.
func (h hookRun) target() string {
	var in toolInput
	if json.Unmarshal(h.ev.ToolInput, &in) != nil {
		return string(h.ev.Cwd)
	}
	p := string(in.FilePath)
	if p == "" {
		p = string(in.NotebookPath)
	}
	if p == "" {
		return string(h.ev.Cwd)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(string(h.ev.Cwd), p)
	}
	return p
}

// snapshot snapshots project, labelled with the session and turn.
func (h hookRun) snapshot(project, turn string, end bool, reason string) error {
	opts := casckpt.SnapshotOptions{Reason: reason, Session: h.ev.SessionID, Turn: turn, EndTurn: end}
	_, err := h.store.Snapshot(h.ctx, project, opts)
	return err
}

// hookLog appends one line (time, event, error) to the store's hook log,
// for an s3:// store the one in the cache directory (see cacheRoot); when
// it cannot, the line goes to stderr. A log past hookLogMax bytes is
// first moved to hook.log.1 (replacing the one before).
func (g *globals) hookLog(event string, err error) {
	line := fmt.Sprintf("%s %s %s\n", g.now().UTC().Format(time.RFC3339), event, strings.ReplaceAll(err.Error(), "\n", " "))
	dir, derr := g.storePath()
	if derr == nil && casckpt.IsRemote(dir) {
		dir, derr = g.cacheRoot()
	}
	if derr == nil {
		derr = os.MkdirAll(dir, 0o700)
	}
	if derr == nil {
		name := filepath.Join(dir, hookLogName)
		if st, err := os.Stat(name); err == nil && st.Size() > hookLogMax {
			_ = os.Rename(name, name+".1") // on failure, the log grows on
		}
		var f *os.File
		if f, derr = os.OpenFile(filepath.Join(dir, hookLogName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); derr == nil {
			_, derr = f.WriteString(line)
			derr = errors.Join(derr, f.Close())
		}
	}
	if derr != nil {
		fmt.Fprint(g.io.err, errorPrefix+"hook: "+line)
	}
}

// printHookSettings prints the hooks block for .claude/settings.json, each
// hook running this binary by its absolute path.
func printHookSettings(g *globals) error {
	bin, err := os.Executable()
	if err != nil {
		bin = "casckpt"
	}
	command := shellQuote(bin) + " hook claude-code"
	entry := func(matcher string) []map[string]any {
		e := map[string]any{"hooks": []map[string]string{{"type": "command", "command": command}}}
		if matcher != "" {
			e["matcher"] = matcher
		}
		return []map[string]any{e}
	}
	return writeJSON(g.io.out, map[string]any{"hooks": map[string]any{
		"UserPromptSubmit": entry(""),
		"PreToolUse":       entry("Write|Edit|MultiEdit|NotebookEdit|Bash"),
		"PostToolUse":      entry("Write|Edit|MultiEdit|NotebookEdit"),
		"Stop":             entry(""),
	}})
}
