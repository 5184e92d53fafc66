package main

import (
	"cmp"
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

// Hook snapshot retention defaults: the snapshots of the last
// defaultKeepTurns turns and of the last defaultKeepDays days, whichever
// keeps more.
const (
	defaultKeepTurns = 50
	defaultKeepDays  = 7
)

// hookFlags are the hook command's flags.
type hookFlags struct {
	printSettings, install, uninstall, user, project bool
	keepTurns, keepDays                              int
}

func newClaudeCodeHookCommand(g *globals) *cobra.Command {
	var f hookFlags
	cmd := &cobra.Command{
		Use:   "claude-code",
		Short: "act on one Claude Code hook event read on stdin",
		Long: `claude-code reads one Claude Code hook event (JSON) on stdin and acts on it:
UserPromptSubmit starts a turn (session = session_id, turn = prompt_id,
title = the prompt's first line) in the project at cwd, first ending the
session's open turns (a prompt interrupted with Esc gets no Stop) on the
snapshot that starts it, marked interrupted, as SessionStart and
SessionEnd do; PreToolUse of Write, Edit, MultiEdit, NotebookEdit or
Bash snapshots the project at cwd, and the project holding
tool_input.file_path when the store knows it or it has a root marker (a
file in no project is logged, not snapshotted), once per project per
prompt; PostToolUse of a write tool records the write; Stop ends
the turn in every project the prompt touched. Without a prompt_id, a
prompt gets the ID "p-" and 16 hex digits of a hash of its session, text,
time and the number of turns the store holds of the session, and a tool
or Stop event belongs to its session's newest prompt, as the store
records it.

Its snapshots keep the last --keep-turns turns and every turn of the last
--keep-days days, whichever keeps more (and the pinned snapshots).

It always exits 0 and waits at most a second for a busy store, or for a
silent server of an s3:// store. Failures and misses go to hook.log in the
store (for an s3:// store, in its cache directory, $XDG_CACHE_HOME/casckpt),
one line each, and casckpt status shows the newest. On stdout it prints nothing, but when UserPromptSubmit
fails to checkpoint, once per session, the JSON object
{"systemMessage": "..."} that Claude Code shows the user.

--print-settings prints the hooks block for .claude/settings.json;
--install merges it into .claude/settings.json of the current
directory (--project, the default) or ~/.claude/settings.json (--user),
keeping every other hook, and --uninstall removes it.`,
		Args: cobra.NoArgs,
		// The hook never fails: a bad CASCKPT_NOW is logged, not refused.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			g.ran = true
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n := countTrue(f.printSettings, f.install, f.uninstall); n > 1 {
				return usagef("give one of --print-settings, --install and --uninstall")
			}
			if f.user && f.project {
				return usagef("give --user or --project, not both")
			}
			if (f.user || f.project) && !f.install && !f.uninstall {
				return usagef("--user and --project go with --install or --uninstall")
			}
			badKeep := f.keepTurns < 1 || f.keepDays < 0
			switch {
			case badKeep && (f.printSettings || f.install || f.uninstall):
				return usagef("--keep-turns must be at least 1 and --keep-days at least 0")
			case f.printSettings:
				return printHookSettings(cmd, g)
			case f.install || f.uninstall:
				return installHook(cmd, g, f)
			case badKeep: // the hook never fails: Claude Code would block the prompt
				g.hookLog("-", fmt.Errorf("--keep-turns %d --keep-days %d: want at least 1 and 0; kept the defaults, %d and %d", f.keepTurns, f.keepDays, defaultKeepTurns, defaultKeepDays))
				f.keepTurns, f.keepDays = defaultKeepTurns, defaultKeepDays
			}
			runHook(cmd.Context(), g, f)
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.printSettings, "print-settings", false, "print the hooks block for .claude/settings.json")
	cmd.Flags().BoolVar(&f.install, "install", false, "merge the hooks block into a Claude Code settings.json")
	cmd.Flags().BoolVar(&f.uninstall, "uninstall", false, "remove this hook from a Claude Code settings.json")
	cmd.Flags().BoolVar(&f.user, "user", false, "with --install or --uninstall: the user's ~/.claude/settings.json")
	cmd.Flags().BoolVar(&f.project, "project", false, "with --install or --uninstall: .claude/settings.json of the current directory (the default)")
	cmd.Flags().IntVar(&f.keepTurns, "keep-turns", defaultKeepTurns, "keep the snapshots of the newest `N` turns")
	cmd.Flags().IntVar(&f.keepDays, "keep-days", defaultKeepDays, "and of every turn of the last `D` days")
	return cmd
}

// countTrue counts the true values of bs.
func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// hookEvent is the part of a Claude Code hook event the hook reads; other
// fields are ignored.
type hookEvent struct {
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

// runHook reads one event from stdin and acts on it, logging any failure;
// a failed UserPromptSubmit also tells the user, once per session.
func runHook(ctx context.Context, g *globals, f hookFlags) {
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
	if err := g.hookEvent(ctx, ev, f); err != nil {
		fail(err)
		if ended := (endError{}); ev.Name == "UserPromptSubmit" && !errors.As(err, &ended) {
			g.hookTell(ev.SessionID, err)
		}
	}
}

// hookEvent acts on ev; unknown events are ignored.
func (g *globals) hookEvent(ctx context.Context, ev hookEvent, f hookFlags) error {
	switch ev.Name {
	case "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart", "SessionEnd":
	default:
		return nil
	}
	if (ev.Name == "PreToolUse" || ev.Name == "PostToolUse") && !checkpointTools[ev.ToolName] {
		return nil
	}
	if ev.SessionID == "" || ev.Cwd == "" {
		return errors.New("the event has no session_id or cwd: nothing to attribute it to")
	}
	dir, err := g.storePath()
	if err != nil {
		return err
	}
	store, err := g.openAt(dir, casckpt.Options{Now: g.now, HomeDir: g.home(), LockTimeout: hookWait, S3Timeout: hookWait})
	if err != nil {
		return err
	}
	h := hookRun{ctx: ctx, store: store, ev: ev, now: g.now, keepTurns: f.keepTurns, keepDays: f.keepDays}
	switch ev.Name {
	case "UserPromptSubmit":
		return h.promptSubmit()
	case "SessionStart", "SessionEnd":
		if ev.Source == "compact" {
			return nil // the context was compacted: the prompt goes on
		}
		turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
		if err != nil {
			return err
		}
		return h.interrupt(turns, "")
	case "PreToolUse":
		return h.preToolUse()
	case "PostToolUse":
		return h.postToolUse()
	}
	return h.stop()
}

// hookRun is one event being acted on.
type hookRun struct {
	ctx                 context.Context
	store               *casckpt.Store
	ev                  hookEvent
	now                 func() time.Time
	keepTurns, keepDays int
}

// promptSubmit ends the session's open turns (see interrupt) and starts
// the prompt's turn in the project at cwd, titled with its first line.
func (h hookRun) promptSubmit() error {
	turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
	if err != nil {
		return err
	}
	turn := h.ev.PromptID
	if turn == "" {
		sum := sha256.New()
		fmt.Fprintf(sum, "%s\x00%s\x00%d\x00%d", h.ev.SessionID, h.ev.Prompt, h.now().UnixNano(), len(turns))
		turn = "p-" + hex.EncodeToString(sum.Sum(nil))[:16]
	}
	project, err := h.store.Root(h.ctx, string(h.ev.Cwd))
	if err != nil {
		return err
	}
	ended := h.interrupt(turns, turn)
	opts := h.options(turn, "claude-code: prompt submitted")
	opts.Title = h.ev.Prompt
	if _, err = h.store.Snapshot(h.ctx, project, opts); err != nil {
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
func (h hookRun) interrupt(turns []casckpt.SessionTurn, turn string) error {
	var errs []error
	for _, t := range turns {
		if t.Open && t.ID != turn {
			opts := h.options(t.ID, "claude-code: turn interrupted")
			opts.EndTurn, opts.Interrupted = true, true
			_, err := h.store.Snapshot(h.ctx, t.Project, opts)
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

// stop ends the prompt's turn in every project where it started; where
// something ended it before (an event taken for an interruption), its end
// moves to the Stop's snapshot, no longer interrupted.
func (h hookRun) stop() error {
	turns, err := h.store.SessionTurns(h.ctx, h.ev.SessionID)
	if err != nil {
		return err
	}
	turn := h.promptOf(turns)
	var errs []error
	for _, t := range turns {
		if t.ID == turn {
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

// options are the options of a hook snapshot labelled with the session
// and turn: it keeps turns, not a count of snapshots.
func (h hookRun) options(turn, reason string) casckpt.SnapshotOptions {
	return casckpt.SnapshotOptions{Reason: reason, Session: h.ev.SessionID, Turn: turn, KeepTurns: h.keepTurns, KeepDays: h.keepDays}
}

// snapshot snapshots project, labelled with the session and turn.
func (h hookRun) snapshot(project, turn string, end bool, reason string) error {
	opts := h.options(turn, reason)
	opts.EndTurn = end
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

// hookTold is the file, beside the hook log, that names the sessions
// already told of a failing checkpoint (the newest hookToldMax).
const (
	hookToldName = "hook.told"
	hookToldMax  = 200
)

// hookTell tells the user that the prompt got no checkpoint, once per
// session: it prints the JSON object whose systemMessage Claude Code shows.
// When the note of sessions told cannot be kept (or the event names no
// session), it tells every time.
func (g *globals) hookTell(session string, err error) {
	if dir, derr := g.hookStateDir(); derr == nil && session != "" {
		name := filepath.Join(dir, hookToldName)
		data, _ := os.ReadFile(name)
		told := strings.Split(strings.TrimSpace(string(data)), "\n")
		if slices.Contains(told, session) {
			return
		}
		told = append(told, session)
		if len(told) > hookToldMax {
			told = told[len(told)-hookToldMax:]
		}
		if os.MkdirAll(dir, 0o700) == nil {
			_ = os.WriteFile(name, []byte(strings.TrimSpace(strings.Join(told, "\n"))+"\n"), 0o600) // unkept: told again
		}
	}
	msg := oneLine(err.Error())
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "..."
	}
	_ = writeJSON(g.io.out, map[string]string{"systemMessage": "casckpt: no checkpoint of this prompt: " + msg +
		" (casckpt status shows the hook's recent misses; said once per session)"})
}

// hookStateDir is where the hook keeps its notes and where status looks
// for its log: the store's directory, or for a store in a bucket the
// local cache directory.
func (g *globals) hookStateDir() (string, error) {
	dir, err := g.storePath()
	if err != nil || !casckpt.IsRemote(dir) {
		return dir, err
	}
	return g.cacheRoot()
}

// hookMissesShown is how many of the hook log's lines of the last day
// status shows.
const hookMissesShown = 5

// hookMisses returns the hook log's lines of the last day, at most the
// newest n: what status shows.
func (g *globals) hookMisses(n int) []string {
	out := []string{}
	dir, err := g.hookStateDir()
	if err != nil {
		return out
	}
	data, err := os.ReadFile(filepath.Join(dir, hookLogName))
	if err != nil {
		return out
	}
	since := g.now().Add(-24 * time.Hour)
	for line := range strings.Lines(string(data)) {
		stamp, _, _ := strings.Cut(line, " ")
		if t, err := time.Parse(time.RFC3339, stamp); err == nil && !t.Before(since) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out[max(0, len(out)-n):]
}

// hookCommand is the command line a Claude Code hook runs: this binary by
// its absolute path, with the store (when --store or CASCKPT_HOME named
// it; the hook's environment may lack CASCKPT_HOME) and the retention.
func hookCommand(cmd *cobra.Command, g *globals) string {
	bin, err := os.Executable()
	if err != nil {
		bin = "casckpt"
	}
	line := shellQuote(bin) + " hook claude-code"
	if store := cmp.Or(g.storeDir, g.env("CASCKPT_HOME")); store != "" {
		if !casckpt.IsRemote(store) {
			if abs, err := filepath.Abs(store); err == nil {
				store = abs
			}
		}
		line += " --store " + shellQuote(store)
	}
	keepTurns, _ := cmd.Flags().GetInt("keep-turns")
	keepDays, _ := cmd.Flags().GetInt("keep-days")
	return line + fmt.Sprintf(" --keep-turns %d --keep-days %d", keepTurns, keepDays)
}

// hookMatchers are the events the hook is installed for, with their tool
// matchers ("": none).
var hookMatchers = []struct{ event, matcher string }{
	{"UserPromptSubmit", ""},
	{"PreToolUse", "Write|Edit|MultiEdit|NotebookEdit|Bash"},
	{"PostToolUse", "Write|Edit|MultiEdit|NotebookEdit"},
	{"Stop", ""},
	{"SessionStart", ""},
	{"SessionEnd", ""},
}

// hookEntry is one event's entry of the hooks block.
func hookEntry(command, matcher string) map[string]any {
	e := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}
	if matcher != "" {
		e["matcher"] = matcher
	}
	return e
}

// printHookSettings prints the hooks block for .claude/settings.json,
// indented.
func printHookSettings(cmd *cobra.Command, g *globals) error {
	command := hookCommand(cmd, g)
	hooks := map[string]any{}
	for _, m := range hookMatchers {
		hooks[m.event] = []any{hookEntry(command, m.matcher)}
	}
	enc := json.NewEncoder(g.io.out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"hooks": hooks})
}
