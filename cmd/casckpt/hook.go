package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/integrations/claudecode"
)

// hookOptions are the flags of hook claude-code.
type hookOptions struct {
	printSettings, install, uninstall, user, project bool
	keepTurns, keepDays                              int
}

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
	var o hookOptions
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runClaudeCodeHook(cmd.Context(), o, g) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.printSettings, "print-settings", false, "print the hooks block for .claude/settings.json")
	f.BoolVar(&o.install, "install", false, "merge the hooks block into a Claude Code settings.json")
	f.BoolVar(&o.uninstall, "uninstall", false, "remove this hook from a Claude Code settings.json")
	f.BoolVar(&o.user, "user", false, "with --install or --uninstall: the user's ~/.claude/settings.json")
	f.BoolVar(&o.project, "project", false, "with --install or --uninstall: .claude/settings.json of the current directory (the default)")
	f.IntVar(&o.keepTurns, "keep-turns", claudecode.DefaultKeepTurns, "keep the snapshots of the newest `N` turns")
	f.IntVar(&o.keepDays, "keep-days", claudecode.DefaultKeepDays, "and of every turn of the last `D` days")
	return cmd
}

// runClaudeCodeHook prints or installs the hook's settings, or acts on
// the event on stdin; acting on an event never fails (it logs instead).
func runClaudeCodeHook(ctx context.Context, o hookOptions, g *globals) error {
	if err := o.check(); err != nil {
		return err
	}
	switch {
	case o.printSettings:
		return claudecode.WriteSettings(g.io.out, hookCommand(g, o))
	case o.install || o.uninstall:
		return installHook(g, o)
	}
	h := g.claudeCodeHook(o)
	if o.keepTurns < 1 || o.keepDays < 0 { // the hook never fails: Claude Code would block the prompt
		h.Log("-", fmt.Errorf("--keep-turns %d --keep-days %d: want at least 1 and 0; kept the defaults, %d and %d", o.keepTurns, o.keepDays, claudecode.DefaultKeepTurns, claudecode.DefaultKeepDays))
		h.KeepTurns, h.KeepDays = claudecode.DefaultKeepTurns, claudecode.DefaultKeepDays
	}
	if v := g.env("CASCKPT_NOW"); v != "" {
		t, err := parseNow(v)
		if err != nil {
			h.Log("-", err)
			return nil
		}
		g.now = func() time.Time { return t }
		h.Now = g.now
	}
	h.Run(ctx, g.io.in)
	return nil
}

// check refuses (exit 2) flags that do not go together.
func (o hookOptions) check() error {
	switch {
	case countTrue(o.printSettings, o.install, o.uninstall) > 1:
		return usagef("give one of --print-settings, --install and --uninstall")
	case o.user && o.project:
		return usagef("give --user or --project, not both")
	case (o.user || o.project) && !o.install && !o.uninstall:
		return usagef("--user and --project go with --install or --uninstall")
	case (o.keepTurns < 1 || o.keepDays < 0) && (o.printSettings || o.install || o.uninstall):
		return usagef("--keep-turns must be at least 1 and --keep-days at least 0")
	}
	return nil
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

// claudeCodeHook is the hook of o over the store g names, logging to its
// directory (see hookDir) and telling the user on stdout.
func (g *globals) claudeCodeHook(o hookOptions) claudecode.Hook {
	return claudecode.Hook{
		Open: func() (*casckpt.Store, error) {
			dir, err := g.storePath()
			if err != nil {
				return nil, err
			}
			return g.openAt(dir, casckpt.Options{Now: g.now, HomeDir: g.home(), LockTimeout: claudecode.Wait, S3Timeout: claudecode.Wait, FilePacksOnly: g.env("CASCKPT_FILE_PACKS") == "1"})
		},
		Now: g.now, KeepTurns: o.keepTurns, KeepDays: o.keepDays,
		Dir: g.hookDir(), Out: g.io.out,
		Unlogged: func(line string) { fmt.Fprint(g.io.err, errorPrefix+"hook: "+line) },
	}
}

// hookDir is where the hook keeps its log and notes, and where status
// looks for them: the store's directory, or for a store in a bucket the
// local cache directory (see cacheRoot); "" when there is none.
func (g *globals) hookDir() string {
	dir, err := g.storePath()
	if err == nil && casckpt.IsBucket(dir) {
		dir, err = g.cacheRoot()
	}
	if err != nil {
		return ""
	}
	return dir
}

// hookCommand is the command line a Claude Code hook runs: this binary by
// its absolute path, with the store (when --store or CASCKPT_HOME named
// it; the hook's environment may lack CASCKPT_HOME) and the retention.
func hookCommand(g *globals, o hookOptions) string {
	bin, err := os.Executable()
	if err != nil {
		bin = "casckpt"
	}
	line := shellQuote(bin) + " hook claude-code"
	if store := cmp.Or(g.storeDir, g.env("CASCKPT_HOME")); store != "" {
		if !casckpt.IsBucket(store) {
			if abs, err := filepath.Abs(store); err == nil {
				store = abs
			}
		}
		line += " --store " + shellQuote(store)
	}
	return line + fmt.Sprintf(" --keep-turns %d --keep-days %d", o.keepTurns, o.keepDays)
}

// installHook merges the hooks block into a settings file (--install), or
// takes this hook out of it (--uninstall), and says what changed.
func installHook(g *globals, o hookOptions) error {
	path, err := settingsPath(g, o.user)
	if err != nil {
		return err
	}
	var c claudecode.Change
	if o.install {
		c, err = claudecode.Install(path, hookCommand(g, o))
	} else {
		c, err = claudecode.Uninstall(path)
	}
	if err != nil {
		return err
	}
	switch {
	case c.Missing:
		_, err = fmt.Fprintf(g.io.out, "%s does not exist: nothing to remove\n", path)
	case c.Unchanged:
		_, err = fmt.Fprintf(g.io.out, "%s: already as it should be, unchanged\n", path)
	case o.install && c.Removed > 0:
		_, err = fmt.Fprintf(g.io.out, "%s: replaced the casckpt hook (%s)\n", path, strings.Join(c.Added, ", "))
	case o.install:
		_, err = fmt.Fprintf(g.io.out, "%s: added the casckpt hook (%s)\n", path, strings.Join(c.Added, ", "))
	case c.Removed > 0:
		_, err = fmt.Fprintf(g.io.out, "%s: removed the casckpt hook from %s\n", path, countOf(int64(c.Removed), "event"))
	default:
		_, err = fmt.Fprintf(g.io.out, "%s: no casckpt hook in it, unchanged\n", path)
	}
	return err
}

// settingsPath is the settings file --install and --uninstall change:
// ~/.claude/settings.json with --user, else .claude/settings.json of the
// current directory.
func settingsPath(g *globals, user bool) (string, error) {
	if user {
		if g.home() == "" {
			return "", fmt.Errorf("--user: HOME is not set")
		}
		return filepath.Join(g.home(), ".claude", "settings.json"), nil
	}
	return filepath.Abs(filepath.Join(".claude", "settings.json"))
}
