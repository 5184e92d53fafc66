package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// snapshotOptions are the flags of snapshot.
type snapshotOptions struct {
	reason    string
	keep      int
	maxFileMB int64
	maxFiles  int
	maxSizeMB int64
	exclude   []string
	maxDirs   int
	session   string
	turn      string
	endTurn   bool
	given     map[string]bool // the flags the command line gave
}

func newSnapshotCommand(g *globals) *cobra.Command {
	var o snapshotOptions
	cmd := &cobra.Command{
		Use:   "snapshot [DIR]",
		Short: "record the working tree of DIR (default .) unless it is unchanged",
		Long: "Records the working tree of DIR (default .) unless it is unchanged.\n\n" +
			"Never captured: .git, paths a .gitignore ignores, files over --max-file-size-mb, and, by default,\n" +
			"paths matching these patterns (a pattern ending in / matches directories), at any depth:\n\n" +
			wrapWords(casckpt.DefaultExcludes(), 100, "  ") + "\n\n" +
			"A .gitignore negation (!build/) brings a default-excluded path back, and so does the project's\n" +
			"git index when it tracks the path. Files that cannot be read are not captured and are never\n" +
			"touched by restore or undo (--json: unreadable).\n\n" +
			"--exclude adds a gitignore pattern to the default list, and --max-dir-files N leaves out whole\n" +
			"each directory of N files or more that the git index tracks none of; the snapshot records both,\n" +
			"so restore, undo and diff of it leave what they excluded alone.",
		Args: argsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.given = changedFlags(cmd)
			return runSnapshot(cmd.Context(), o, g, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.reason, "message", "m", "", "why the snapshot is taken")
	f.IntVar(&o.keep, "keep", casckpt.DefaultKeep, "keep at most N snapshots of the project (older unpinned ones are dropped)")
	f.Int64Var(&o.maxFileMB, "max-file-size-mb", 10, "leave out files larger than N MiB")
	f.IntVar(&o.maxFiles, "max-files", 50_000, "refuse a tree of more than N files")
	f.Int64Var(&o.maxSizeMB, "max-size-mb", casckpt.DefaultMaxStoreSize>>20, "keep the store under N MiB by dropping old snapshots (0: no cap; default 500 on a local store, none on an s3:// one)")
	f.StringArrayVar(&o.exclude, "exclude", nil, "also leave out paths matching this gitignore `PATTERN`, as the default list (repeatable; recorded with the snapshot, whose restore leaves them alone)")
	f.IntVar(&o.maxDirs, "max-dir-files", 0, "leave out whole each directory of `N` files or more none of which git tracks (0: off; recorded with the snapshot)")
	f.StringVar(&o.session, "session", "", "label the snapshot with the agent's session `ID`")
	f.StringVar(&o.turn, "turn", "", "label the snapshot with the agent's turn `ID`; the project's first snapshot of a turn starts it")
	f.BoolVar(&o.endTurn, "end-turn", false, "end the turn of --turn on this snapshot")
	addHereFlag(cmd, g)
	return cmd
}

// wrapWords joins words with spaces into lines of at most width bytes,
// each starting with indent.
func wrapWords(words []string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, w := range words {
		if len(line) > len(indent) && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// runSnapshot snapshots the project at args' DIR and prints the result.
func runSnapshot(ctx context.Context, o snapshotOptions, g *globals, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	if err := checkLabel(o.given, "session", o.session); err != nil {
		return err
	}
	if err := checkLabel(o.given, "turn", o.turn); err != nil {
		return err
	}
	if o.endTurn && o.turn == "" {
		return usagef("--end-turn needs --turn: the ID of the turn it ends")
	}
	if o.keep < 1 || o.maxFiles < 1 {
		return usagef("--keep and --max-files take a number of at least 1")
	}
	if err := casckpt.CheckExclusions(o.exclude, o.maxDirs); err != nil {
		return usagef("--exclude or --max-dir-files: %v", err)
	}
	maxFileSize, err := mebibytes("max-file-size-mb", o.maxFileMB, 1)
	if err != nil {
		return err
	}
	maxStoreSize, err := mebibytes("max-size-mb", o.maxSizeMB, 0)
	if err != nil {
		return err
	}
	var bar *progressbar.ProgressBar
	if g.stderrTerminal() {
		bar = newBytesBar(g.io.err, -1, progressbar.OptionSetDescription("hashing"), progressbar.OptionUseIECUnits(true), progressbar.OptionShowCount())
		g.uploaded = (&uploadNote{bar: bar}).add
	}
	store, proj, err := g.openProject(ctx, dir)
	if err != nil {
		return err
	}
	opts := casckpt.SnapshotOptions{
		Reason: o.reason, Keep: o.keep, MaxFileSize: maxFileSize, MaxFiles: o.maxFiles, Exclude: o.exclude, MaxDirFiles: o.maxDirs,
		MaxStoreSize: maxStoreSize, Session: o.session, Turn: o.turn, EndTurn: o.endTurn,
	}
	if !o.given["keep"] {
		opts.Keep = 0 // the project's policy's, else DefaultKeep
	}
	switch {
	case !o.given["max-size-mb"]:
		opts.MaxStoreSize = 0 // the library's default: see SnapshotOptions.MaxStoreSize
	case o.maxSizeMB == 0:
		opts.MaxStoreSize = -1
	}
	tighten := tightenGCPast(bigSnapshot)
	opts.Progress = func(_, bytes int64) {
		tighten(bytes)
		if bar != nil {
			_ = bar.Set64(bytes)
		}
	}
	res, err := store.Snapshot(ctx, proj.dir, opts)
	if bar != nil {
		_ = bar.Clear()
	}
	if err != nil {
		g.interrupted = "nothing was recorded"
		if res.Created {
			g.interrupted = "snapshot " + res.ID.Short() + " was recorded"
		}
		return err
	}
	for _, w := range res.Warnings {
		g.warn(w)
	}
	doc := jsonapi.Snapshot{Created: res.Created, ID: idOrNull(res.ID), Project: jsonapi.Path(res.Project), Files: res.Files, Bytes: res.Bytes,
		Session: labelOrNull(o.session), Turn: labelOrNull(o.turn),
		ExcludedByDefault: res.ExcludedByDefault, Unreadable: jsonapi.Paths(orEmpty(res.Unreadable))}
	return g.emit(doc, func(w io.Writer) { printSnapshot(w, res, o) })
}

// printSnapshot prints snapshot's result res for people.
func printSnapshot(w io.Writer, res casckpt.SnapshotResult, o snapshotOptions) {
	switch {
	case res.Created:
		fmt.Fprintf(w, "created %s: %s, %s", res.ID.Short(), countOf(res.Files, "file"), humanBytes(res.Bytes))
		if len(res.Dropped) > 0 {
			fmt.Fprintf(w, "; dropped %s", countOf(int64(len(res.Dropped)), "old snapshot"))
		}
	case res.ID.IsZero():
		fmt.Fprint(w, "nothing to snapshot: the tree is empty")
	default:
		fmt.Fprintf(w, "unchanged since %s", res.ID.Short())
	}
	switch {
	case res.TurnStarted && res.TurnEnded:
		fmt.Fprintf(w, "; turn %s started and ended", oneLine(o.turn))
	case res.TurnStarted:
		fmt.Fprintf(w, "; turn %s started", oneLine(o.turn))
	case res.TurnEnded:
		fmt.Fprintf(w, "; turn %s ended", oneLine(o.turn))
	}
	fmt.Fprintln(w)
}

// uploadNote shows, in the description of the hashing bar, the bytes of
// packs an s3:// store has sent (the uploads run beside the hashing, and
// after it until the last pack is in the bucket). The bar redraws at most
// every 100 ms, whoever calls.
type uploadNote struct {
	bar  *progressbar.ProgressBar
	mu   sync.Mutex
	sent int64
}

func (u *uploadNote) add(bytes int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sent += bytes
	u.bar.Describe("hashing, " + humanBytes(u.sent) + " uploaded")
}

// bigSnapshot is how many bytes a snapshot hashes before the command
// halves the garbage collector's headroom (tightenGCPast).
const bigSnapshot = 32 << 20

// tightenGCPast returns a progress callback that, once a snapshot has
// hashed more than limit bytes, sets GOGC to 50 (unless the environment
// sets GOGC). A first snapshot of a large tree compresses with an encoder
// per core up to a cap (cas's parallelism), whose tables and buffers took
// W1 on 2 cores to 69.7 MiB of peak RSS; with GOGC 50 from 32 MiB hashed
// on it peaked at 58.9 MiB (60.0 at most in 4 runs; 63.7 from 64 MiB on). A turn's snapshot
// never hashes that much and keeps startGCPercent, which costs it about 5
// ms less (a W3 turn at GOGC 100: 57.6 against 62.2 ms). It is safe for
// concurrent use.
func tightenGCPast(limit int64) func(bytes int64) {
	var once sync.Once
	return func(bytes int64) {
		if bytes > limit {
			once.Do(func() {
				if os.Getenv("GOGC") == "" {
					debug.SetGCPercent(50)
				}
			})
		}
	}
}
