package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// A release's casckpt is lean (the tag casckpt_lean): it links neither
// the S3 client, nor go-git (what reads other agents' checkpoints), nor
// the MCP SDK, whose package initialisation cost every process, a turn
// or a hook's call, about 2 ms (casckpt --version 5.5-6.0 against 7.9-8.3
// ms; BenchmarkCmdW3W5's turn 18.1-18.4 ms against 19.5-19.7 ms for a
// casckpt without only the S3 client). A command line that
// needs one of them runs in the companion instead, the whole build,
// shipped beside it, as git runs git-remote-https so that git itself does
// not link libcurl: one that names an s3:// store, and status, migrate,
// clear-legacy and mcp (wholeCommands); it pays about 4 ms for the second
// start (BenchmarkCmdS3W3's turn 28.3-28.8 against 32.4-33.0 ms). A build
// without the tag (go build, go install) is whole and runs everything
// itself.
const companion = "casckpt-full"

// handedOff is set in the environment of the companion a lean casckpt
// runs. A companion that is lean itself (a casckpt copied over
// casckpt-full) then refuses (noCompanion) where it would run itself again
// without end; the whole build clears it (handOff), so that no process it
// starts inherits it.
const handedOff = "CASCKPT_HANDED_OFF"

// mayHandOff reports whether this process may run a command line in the
// companion: it is lean, and not itself run as one by a lean casckpt.
func mayHandOff() bool { return lean && os.Getenv(handedOff) == "" }

// wholeCommands are the commands that need the whole build: status and
// clear-legacy read other agents' git stores (go-git), as migrate does,
// and mcp is the MCP SDK's server.
var wholeCommands = map[string]bool{"status": true, "migrate": true, "clear-legacy": true, "mcp": true}

// needsCompanion reports whether a lean casckpt runs the command line args,
// in environment env, in the companion: it may name an s3:// store
// (namesBucket), or runs one of wholeCommands (help for one too).
func needsCompanion(args []string, env func(string) string) bool {
	name, rest := commandName(args)
	if name == "help" {
		name, _ = commandName(rest)
	}
	return wholeCommands[name] || namesBucket(args, env)
}

// rootValueFlags are the root command's flags that take a value, which
// may be the next argument (see commandName).
var rootValueFlags = map[string]bool{"--store": true, "--color": true}

// commandName returns the command that args run, the first argument that
// is neither a flag nor the value of one of rootValueFlags, and the
// arguments after it; "" when there is none.
func commandName(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return "", nil
		case rootValueFlags[a]:
			i++
		case !strings.HasPrefix(a, "-"):
			return a, args[i+1:]
		}
	}
	return "", nil
}

// namesBucket reports whether the command line args, in environment env,
// may name an s3:// store: --store s3://..., --store=s3://... or
// $CASCKPT_HOME. It leans to yes (a value of another flag that reads
// "--store", or an argument after "--"): the companion runs every
// command line, only slower, so a yes is never wrong, where a no would
// refuse the store.
func namesBucket(args []string, env func(string) string) bool {
	if casckpt.IsBucket(env("CASCKPT_HOME")) {
		return true
	}
	for i, a := range args {
		if a == "--store" && i+1 < len(args) && casckpt.IsBucket(args[i+1]) {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--store="); ok && casckpt.IsBucket(v) {
			return true
		}
	}
	return false
}

// companionPath is where the companion is looked for: beside this
// executable, its symbolic links resolved (a casckpt on PATH may be a
// link to an unpacked archive's).
func companionPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	name := companion
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(exe), name), nil
}

// noCompanion is the error of a lean casckpt asked for subject, which
// needs the whole build for need (s3:// stores, or a command of
// wholeCommands), when the companion is missing or did not start.
func noCompanion(subject, need string) error {
	where, err := companionPath()
	if err != nil {
		where = companion + " beside this casckpt"
	}
	if os.Getenv(handedOff) != "" {
		return fmt.Errorf("%w: %s: this casckpt, run as %s by a lean casckpt for %s, is lean itself: reinstall casckpt (its archives, pip and npm packages ship both), or use a whole build (go build ./cmd/casckpt)", casckpt.ErrRefused, subject, where, need)
	}
	return fmt.Errorf("%w: %s: this casckpt runs %s for %s, and it is missing or does not start: reinstall casckpt (its archives, pip and npm packages ship both), or use a whole build (go build ./cmd/casckpt)", casckpt.ErrRefused, subject, where, need)
}

// inCompanion runs args in the companion as a child process, on std and
// with env, for a command that serve or ui runs in this process (see
// execute) and that a lean casckpt does not run (needsCompanion), and
// returns its outcome. It reports false, having run nothing, when this
// build is whole, args need it not, or the companion does not start: the
// command then runs here (and refuses, see noCompanion).
func inCompanion(ctx context.Context, args []string, std stdio, env func(string) string) (outcome, bool) {
	if !mayHandOff() || !needsCompanion(args, env) {
		return outcome{}, false
	}
	path, err := companionPath()
	if err != nil {
		return outcome{}, false
	}
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, io.MultiWriter(std.out, &out), io.MultiWriter(std.err, &errb)
	cmd.Env = append(childEnv(env), handedOff+"=1")
	if err := cmd.Start(); err != nil {
		return outcome{}, false
	}
	_ = cmd.Wait()
	o := outcome{code: cmd.ProcessState.ExitCode(), jsonDone: true}
	if o.code < 0 {
		o.code = exitFailed // killed: a signal, or ctx ended
	}
	if o.code != exitOK {
		o.msg = lastError(errb.String())
		o.jsonDone = !isErrorDoc(out.Bytes())
	}
	return o, true
}

// isErrorDoc reports whether out is the document a failed command prints
// with --json in place of its own: jsonapi.Error, nothing more.
func isErrorDoc(out []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var e jsonapi.Error
	return dec.Decode(&e) == nil && e.Error != ""
}

// childEnv is env as a child's environment: this process's variables, and
// CASCKPT_NOW, each as env gives it (serve's requests set CASCKPT_NOW).
func childEnv(env func(string) string) []string {
	keys := []string{"CASCKPT_NOW"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	var out []string
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		if v := env(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// lastError is the last error line in a command's stderr (the error,
// after any warnings), without its "casckpt: " prefix.
func lastError(stderr string) string {
	msg := strings.TrimPrefix(strings.TrimSpace(stderr), errorPrefix)
	if i := strings.LastIndex(msg, "\n"+errorPrefix); i >= 0 {
		msg = msg[i+1+len(errorPrefix):]
	}
	return msg
}
