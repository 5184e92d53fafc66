package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

func newServeCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "run command lines read on stdin, one JSON request a line, in one resident process",
		Long: `serve reads requests on stdin, one JSON object a line,
{"id": any, "args": [string...], "cwd"?: string, "now"?: string}, runs each
command line (args, without the program's name; --json implied) in this
process, and answers each on stdout, one line each, in order:
{"id", "exit", "result", "error"}: the request's id, the exit status, the
document the command prints with --json (null when none) and the error's
line without "casckpt: " (null on success). cwd is the directory that
relative paths and a missing DIR resolve against (default serve's); now
stands for CASCKPT_NOW in that request alone; --store applies to every
request. A malformed line is answered with exit 2 and serve goes on; serve,
mcp, ui, hook and clear without --yes are refused with exit 2. No store
lock is held between requests. serve exits 0 at the end of stdin and on
SIGTERM after the request in progress; SIGINT interrupts that request and
ends serve with 130.`,
		Args: argsBetween(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), g) },
	}
}

// serveRequest is one line of serve's input.
type serveRequest struct {
	ID   json.RawMessage `json:"id"`
	Args []string        `json:"args"`
	Cwd  *string         `json:"cwd"`
	Now  *string         `json:"now"`
}

// refusedCommands are the commands serve does not run: those that read
// stdin or serve themselves (clear without --yes asks on stdin).
var refusedCommands = map[string]bool{"serve": true, "mcp": true, "ui": true, "hook": true}

// runServe answers the requests on g's stdin until it ends or a signal
// comes: SIGTERM lets the request in progress finish (exit 0), SIGINT
// interrupts it (exit 130). Requests run one at a time, each in a
// command tree of its own, and the store is opened by each (a Store holds
// no files between calls, so opening is a struct; the lock is taken by
// each operation and released before it answers).
func runServe(ctx context.Context, g *globals) error {
	if keptOld != nil { // a server lives on: each restore frees what it replaced
		keptOld = nil
	}
	g.jsonDone = true                  // stdout carries the answers alone
	store, err := absStore(g.storeDir) // requests may run elsewhere (cwd)
	if err != nil {
		return err
	}
	// A request's context ends with SIGINT only: SIGTERM waits for it.
	reqCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		if !isSignal(ctx, syscall.SIGTERM) {
			cancel(context.Cause(ctx))
		}
	})
	defer stop()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go readLines(g.io.in, lines, readErr)
	for {
		select {
		case <-ctx.Done():
			return serveEnd(ctx)
		case line, ok := <-lines:
			if !ok {
				return ignoreEOF(<-readErr)
			}
			if ctx.Err() != nil { // a signal came while the line waited
				return serveEnd(ctx)
			}
			ans, err := serveLine(reqCtx, g, store, line)
			if err != nil {
				return err
			}
			if err := writeJSON(g.io.out, ans); err != nil {
				return err
			}
		}
	}
}

// absStore is store made absolute unless it is "" or a bucket.
func absStore(store string) (string, error) {
	if store == "" || casckpt.IsBucket(store) {
		return store, nil
	}
	return filepath.Abs(store)
}

// readLines sends each line of r (its newline included) to lines, then
// closes it after sending the error that ended the reading to errc.
func readLines(r io.Reader, lines chan<- []byte, errc chan<- error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 || (err == nil && len(line) > 0) {
			lines <- line
		}
		if err != nil {
			errc <- err
			close(lines)
			return
		}
	}
}

// ignoreEOF is err, nil for the end of stdin.
func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// serveEnd is what serve returns when a signal ended it: nil for SIGTERM
// (exit 0), else the signal (exit 128+N: 130 for SIGINT).
func serveEnd(ctx context.Context) error {
	if isSignal(ctx, syscall.SIGTERM) {
		return nil
	}
	return context.Cause(ctx)
}

// isSignal reports whether ctx was ended by signal sig.
func isSignal(ctx context.Context, sig syscall.Signal) bool {
	var s signalError
	return errors.As(context.Cause(ctx), &s) && s.sig == sig
}

// serveLine runs the request on line and returns its answer; store is
// serve's --store made absolute ("" when not given). An error is serve's
// own (it could not return to its directory) and ends it.
func serveLine(ctx context.Context, g *globals, store string, line []byte) (jsonapi.ServeAnswer, error) {
	var req serveRequest
	if err := json.Unmarshal(line, &req); err != nil {
		var withID struct{ ID json.RawMessage }
		_ = json.Unmarshal(line, &withID) // answer with the id if it has one
		return serveRefusal(withID.ID, "malformed request: %v", err), nil
	}
	if req.Args == nil {
		return serveRefusal(req.ID, "malformed request: no args (a command line as an array of strings)"), nil
	}
	if name := refusedCommand(req.Args); name != "" {
		return serveRefusal(req.ID, "serve does not run %s (serve, mcp, ui, hook and clear without --yes are refused)", name), nil
	}
	if req.Cwd == nil {
		return serveRun(ctx, g, store, req), nil
	}
	back, err := os.Getwd()
	if err != nil {
		return serveRefusal(req.ID, "cwd: %v", err), nil
	}
	if err := os.Chdir(*req.Cwd); err != nil {
		return serveRefusal(req.ID, "cwd %s: %v", *req.Cwd, errors.Unwrap(err)), nil
	}
	// Requests run one at a time, so the process's directory is this
	// request's until it is answered.
	ans := serveRun(ctx, g, store, req)
	if err := os.Chdir(back); err != nil {
		return ans, fmt.Errorf("serve: back to %s: %w", back, err)
	}
	return ans, nil
}

// serveRun runs req's command line in this process and returns its answer.
func serveRun(ctx context.Context, g *globals, store string, req serveRequest) jsonapi.ServeAnswer {
	env := g.env
	if req.Now != nil {
		now := *req.Now
		env = func(k string) string {
			if k == "CASCKPT_NOW" {
				return now
			}
			return g.env(k)
		}
	}
	out, o := runInProcess(ctx, g, store, env, append([]string{"--json"}, req.Args...))
	ans := jsonapi.ServeAnswer{ID: rawOrNil(req.ID), Exit: o.code}
	if o.code != exitOK {
		ans.Error = &o.msg
	}
	if o.code == exitOK || o.jsonDone { // else stdout holds the error's document
		ans.Result = serveResult(out)
	}
	return ans
}

// runInProcess runs the command line args in this process with env and
// store (serve's and ui's --store made absolute; "" for none), copies its
// stderr to g's and returns its stdout and outcome.
func runInProcess(ctx context.Context, g *globals, store string, env func(string) string, args []string) ([]byte, outcome) {
	if store != "" {
		args = append([]string{"--store", store}, args...)
	}
	var out, errb bytes.Buffer
	o := execute(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, env)
	g.io.err.Write(errb.Bytes())
	if g.env("GOGC") == "" {
		debug.SetGCPercent(startGCPercent) // a big snapshot lowered it (tightenGCPast)
	}
	return out.Bytes(), o
}

// serveRefusal is the answer (exit 2) to a request serve does not run.
func serveRefusal(id json.RawMessage, format string, args ...any) jsonapi.ServeAnswer {
	msg := fmt.Sprintf(format, args...)
	return jsonapi.ServeAnswer{ID: rawOrNil(id), Exit: exitUsage, Error: &msg}
}

// rawOrNil is raw as an answer's value: null when the request had none.
func rawOrNil(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// serveResult is an answer's result from what the command printed: its
// JSON document as printed, null for nothing, a string for text (help).
func serveResult(out []byte) any {
	doc := bytes.TrimSpace(out)
	switch {
	case len(doc) == 0:
		return nil
	case json.Valid(doc):
		return json.RawMessage(doc)
	}
	return string(out)
}

// refusedCommand names the command of args that serve refuses ("" for
// one it runs, or a command line that is no command: running it reports
// that).
func refusedCommand(args []string) string {
	root := newRootCommand(&globals{io: stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, env: func(string) string { return "" }})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		return ""
	}
	path := strings.Fields(strings.TrimPrefix(cmd.CommandPath(), root.Name()))
	if refusedCommands[path[0]] {
		return path[0]
	}
	if cmd.Name() == "clear" {
		if cmd.ParseFlags(rest) != nil {
			return "" // running it reports the mistake
		}
		if yes, _ := cmd.Flags().GetBool("yes"); !yes {
			return "clear without --yes"
		}
	}
	return ""
}
