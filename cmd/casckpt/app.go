package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// Exit statuses of the contract.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	// exitInterrupted is the status of a run stopped by Ctrl-C (128+SIGINT,
	// as shells report it); another signal gives 128+its number.
	exitInterrupted = 130
	errorPrefix     = "casckpt: "
)

// stdio is the process's standard streams.
type stdio struct {
	in  io.Reader
	out io.Writer
	err io.Writer
}

// globals is what every command shares: the flags of the root command, the
// streams and the environment.
type globals struct {
	storeDir string
	json     bool
	here     bool   // --here: DIR is its own project (see openProject)
	color    string // --color: auto, always or never (see useColour)
	io       stdio
	env      func(string) string
	now      func() time.Time
	ran      bool // a command's RunE started: errors are no longer usage errors
	jsonDone bool // the command printed its JSON document before failing
	// interrupted says what an interrupted command left behind, for the
	// message; "" says nothing.
	interrupted string
	ctx         context.Context // the run's: bounds the open of an s3:// store
	// uploaded, if set, receives the bytes of packs an s3:// store sends
	// (casckpt.Options.UploadProgress of the store open opens).
	uploaded func(bytes int64)
	// machine is --machine: the machine of a bucket store whose project
	// a reading command reads (and whose snapshot restore restores).
	machine string
}

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "interrupted by " + e.sig.String() }

// usageError marks a mistake in the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// run is the whole program: it parses args, runs the command and returns
// the exit status. It writes only to the given streams and reads only the
// given environment.
func run(ctx context.Context, args []string, std stdio, env func(string) string) int {
	return execute(ctx, args, std, env).code
}

// outcome is what one command line came to.
type outcome struct {
	code int
	// msg is the error's one line without "casckpt: " ("" on success).
	msg string
	// jsonDone says the command printed its own JSON document (before
	// failing, when code is not 0), not the error's.
	jsonDone bool
}

// execute is run, which also returns the error's line and whether the
// command printed its JSON document (serve answers with them).
func execute(ctx context.Context, args []string, std stdio, env func(string) string) outcome {
	if o, ran := inCompanion(ctx, args, std, env); ran {
		return o
	}
	g := &globals{io: std, env: env, now: time.Now, ctx: ctx}
	root := newRootCommand(g)
	root.SetArgs(args)
	root.SetIn(std.in)
	root.SetOut(std.out)
	root.SetErr(std.err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return outcome{code: exitOK, jsonDone: true}
	}
	if ctx.Err() != nil {
		return g.reportInterrupt(ctx)
	}
	code := exitFailed
	var ue usageError
	if errors.As(err, &ue) || !g.ran {
		code = exitUsage
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	switch {
	case errors.Is(err, syscall.ENOSPC):
		msg += "; free some disk space (casckpt prune --max-size-mb N shrinks the store) and try again"
	case errors.Is(err, syscall.EIO):
		msg += "; the disk reported an I/O error: check it, then run casckpt verify"
	}
	fmt.Fprintln(std.err, errorPrefix+msg)
	if (g.json || (!g.ran && slices.Contains(args, "--json"))) && !g.jsonDone {
		writeJSON(std.out, jsonapi.Error{Error: msg, Exit: code})
	}
	return outcome{code: code, msg: msg, jsonDone: g.jsonDone}
}

// reportInterrupt ends a run that a signal (Ctrl-C) stopped: it clears the
// progress line, says so and what was left behind, and returns 128 plus the
// signal's number (130 for Ctrl-C).
func (g *globals) reportInterrupt(ctx context.Context) outcome {
	if g.stderrTerminal() {
		fmt.Fprint(g.io.err, "\r\033[K") // the progress bar's line
	}
	msg := "interrupted"
	if g.interrupted != "" {
		msg += "; " + g.interrupted
	}
	fmt.Fprintln(g.io.err, errorPrefix+msg)
	code := exitInterrupted
	var sig signalError
	if errors.As(context.Cause(ctx), &sig) {
		code = 128 + int(sig.sig)
	}
	if g.json && g.ran && !g.jsonDone {
		writeJSON(g.io.out, jsonapi.Error{Error: msg, Exit: code})
	}
	return outcome{code: code, msg: msg, jsonDone: g.jsonDone}
}

func newRootCommand(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "casckpt",
		Short: "git-free checkpoints of working directories for AI coding agents",
		Long: `casckpt snapshots a working directory before an agent changes it, and
lists, diffs and restores the snapshots exactly. Content is stored once,
BLAKE3-addressed and zstd-compressed, in a store shared by all projects.

SNAP is 4 to 64 hex digits of a snapshot ID, @N (the N-th newest snapshot:
it moves down with every new one, a pre-restore snapshot included) or #N
(the snapshot's stable number in its project, shown by list; quote it in a
shell, '#12'). DIR defaults to the current directory; a DIR inside a
project the store knows acts on that project, as git finds a repository
from a subdirectory, and PATHs are relative to DIR; --here takes DIR as a
project of its own.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			g.ran = true
			if g.color != "auto" && g.color != "always" && g.color != "never" {
				return usagef("--color takes auto, always or never, not %q", g.color)
			}
			if v := g.env("CASCKPT_NOW"); v != "" {
				t, err := parseNow(v)
				if err != nil {
					return err
				}
				g.now = func() time.Time { return t }
			}
			return nil
		},
	}
	var showVersion bool
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			return runVersion(g)
		}
		return cmd.Help()
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version (as the version command does)")
	root.PersistentFlags().StringVar(&g.storeDir, "store", "", "store directory or s3://BUCKET[/PREFIX] (default $CASCKPT_HOME, $XDG_DATA_HOME/casckpt, ~/.local/share/casckpt)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print one JSON document on stdout")
	root.PersistentFlags().StringVar(&g.color, "color", "auto", "colour the output: auto (on a terminal, unless NO_COLOR is set), always or never")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		newSnapshotCommand(g), newListCommand(g), newDiffCommand(g), newRestoreCommand(g), newUndoCommand(g), newRedoCommand(g),
		newCatCommand(g), newLsCommand(g), newExportCommand(g),
		newLogCommand(g),
		newPinCommand(g), newUnpinCommand(g), newForgetCommand(g),
		newGCCommand(g), newPruneCommand(g), newPolicyCommand(g), newStatusCommand(g), newVerifyCommand(g), newRepairCommand(g), newClearCommand(g),
		newMigrateCommand(g), newClearLegacyCommand(g), newRootPathCommand(g), newVersionCommand(g),
		newTurnsCommand(g), newRecordWriteCommand(g), newHookCommand(g),
		newMCPCommand(g), newServeCommand(g), newUICommand(g),
	)
	for _, c := range root.Commands() {
		if machineCommands[c.Name()] {
			addMachineFlag(c, g)
		}
	}
	return root
}

// home is the user's home directory: $HOME, or on Windows, where HOME is
// seldom set, %USERPROFILE% when it is not.
func (g *globals) home() string { return homeDir(g.env, runtime.GOOS) }

// homeDir is $HOME as env gives it, or %USERPROFILE% on Windows (goos)
// when HOME is unset.
func homeDir(env func(string) string, goos string) string {
	if h := env("HOME"); h != "" || goos != "windows" {
		return h
	}
	return env("USERPROFILE")
}

// storePath resolves the store directory: --store, $CASCKPT_HOME,
// $XDG_DATA_HOME/casckpt, $HOME/.local/share/casckpt (HOME: see home).
func (g *globals) storePath() (string, error) {
	switch {
	case g.storeDir != "":
		return g.storeDir, nil
	case g.env("CASCKPT_HOME") != "":
		return g.env("CASCKPT_HOME"), nil
	case g.env("XDG_DATA_HOME") != "":
		return filepath.Join(g.env("XDG_DATA_HOME"), "casckpt"), nil
	case g.home() != "":
		return filepath.Join(g.home(), ".local", "share", "casckpt"), nil
	}
	return "", errors.New("no store: set --store, CASCKPT_HOME or HOME")
}

// open opens the store the globals name.
func (g *globals) open() (*casckpt.Store, error) {
	dir, err := g.storePath()
	if err != nil {
		return nil, err
	}
	switch {
	case g.machine != "" && !casckpt.IsBucket(dir):
		return nil, usagef("--machine reads another machine's projects of a bucket store; %s is a directory", dir)
	case g.machine != "" && !casckpt.ValidMachine(g.machine):
		return nil, usagef("--machine %q: a machine is 1 to 64 letters, digits, dots, dashes and underscores (see casckpt status)", g.machine)
	}
	return g.openAt(dir, casckpt.Options{Now: g.now, HomeDir: g.home(), UploadProgress: g.uploaded, ReadMachine: g.machine, FilePacksOnly: g.env("CASCKPT_FILE_PACKS") == "1"})
}

// machineCommands are the commands that take --machine: those that read
// a project, and restore.
var machineCommands = map[string]bool{"list": true, "diff": true, "cat": true, "ls": true, "export": true, "log": true, "turns": true, "restore": true}

// readMachine is the machine whose project a reading command read from
// store: --machine, else this one; nil for a store in a directory.
func (g *globals) readMachine(store *casckpt.Store) *string {
	m := store.Machine()
	if m == "" {
		return nil
	}
	if g.machine != "" {
		m = g.machine
	}
	return &m
}

// addMachineFlag gives a reading command (and restore) --machine.
func addMachineFlag(cmd *cobra.Command, g *globals) {
	cmd.Flags().StringVar(&g.machine, "machine", "", "on a bucket store, read machine M's project at this path (see casckpt status)")
}

// openAt opens the store at location, a directory or an s3:// URL whose
// index is cached under $XDG_CACHE_HOME/casckpt (else ~/.cache/casckpt).
func (g *globals) openAt(location string, opts casckpt.Options) (*casckpt.Store, error) {
	if !casckpt.IsBucket(location) {
		return casckpt.Open(location, opts)
	}
	if !casckpt.BucketsBuiltIn {
		return nil, noCompanion(location, "s3:// stores")
	}
	opts, err := g.bucketOptions(opts)
	if err != nil {
		return nil, err
	}
	return casckpt.OpenURL(g.ctx, location, opts)
}

// cacheRoot is the directory of the caches of s3:// stores (and of the
// hook log for them): $XDG_CACHE_HOME/casckpt, else ~/.cache/casckpt.
func (g *globals) cacheRoot() (string, error) {
	switch {
	case g.env("XDG_CACHE_HOME") != "":
		return filepath.Join(g.env("XDG_CACHE_HOME"), "casckpt"), nil
	case g.home() != "":
		return filepath.Join(g.home(), ".cache", "casckpt"), nil
	}
	return "", errors.New("no cache directory for the s3:// store: set XDG_CACHE_HOME or HOME")
}

// emit prints v as the command's JSON document, or calls human otherwise.
func (g *globals) emit(v jsonapi.Doc, human func(w io.Writer)) error {
	if g.json {
		return writeJSON(g.io.out, v)
	}
	human(g.io.out)
	return nil
}

// writeJSON prints v, one of the documents of package jsonapi.
func writeJSON(w io.Writer, v jsonapi.Doc) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// warn prints a warning line on stderr.
func (g *globals) warn(msg string) {
	fmt.Fprintln(g.io.err, errorPrefix+"warning: "+strings.ReplaceAll(msg, "\n", `\n`))
}

// stderrTerminal reports whether progress may be drawn: stderr is a
// terminal and the output is for people.
func (g *globals) stderrTerminal() bool {
	f, ok := g.io.err.(*os.File)
	return ok && !g.json && term.IsTerminal(int(f.Fd()))
}

// stdinTerminal reports whether the user can be asked a question.
func (g *globals) stdinTerminal() bool {
	f, ok := g.io.in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
