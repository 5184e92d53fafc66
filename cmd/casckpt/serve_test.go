package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/casckpt/casckpt/internal/osfs"
)

// serveAnswer is one answer line of casckpt serve, its result kept as
// the bytes it has.
type serveAnswer struct {
	ID     json.RawMessage `json:"id"`
	Exit   int             `json:"exit"`
	Result json.RawMessage `json:"result"`
	Error  *string         `json:"error"`
}

// served is a running casckpt serve.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// serve starts casckpt serve with b's environment and extra arguments.
func (b *binEnv) serve(args ...string) *served {
	b.t.Helper()
	return startServed(b.t, b.command(append(args, "serve")...))
}

// send writes one request line.
func (s *served) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// answer reads the next answer line.
func (s *served) answer() serveAnswer {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("no answer: %v (stderr %q)", err, s.stderr.String())
	}
	var a serveAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		s.t.Fatalf("answer %q: %v", line, err)
	}
	return a
}

// ask sends a request and returns its answer.
func (s *served) ask(req map[string]any) serveAnswer {
	s.t.Helper()
	line, err := json.Marshal(req)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(string(line))
	return s.answer()
}

// exit closes stdin unless told not to and returns serve's exit status;
// it must have written nothing more on stdout.
func (s *served) exit(closeStdin bool) int {
	s.t.Helper()
	if closeStdin {
		s.in.Close()
	}
	if rest, _ := io.ReadAll(s.out); len(rest) > 0 {
		s.t.Errorf("serve wrote after its answers: %q", rest)
	}
	err := s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		s.t.Fatal(err)
	}
	return 0
}

// TestServeAnswersAsTheCommands: each answer's result is byte for byte
// the document the same command prints with --json as a process on the
// same store, and its exit and error are the process's; ids come back as
// sent, in order. Every step also runs as a process on a second store
// that thus gets the same history, where the commands that change the
// store are compared, their snapshot IDs (which differ between stores)
// numbered in order.
func TestServeAnswersAsTheCommands(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "one\n", "sub/b.txt": "bee\n"})
	other := filepath.Join(t.TempDir(), "store")
	s := b.serve()
	const now = "2026-03-04T05:06:07Z"
	steps := []struct {
		args    []string
		changes bool // the store: compared on the second store alone
	}{
		{[]string{"snapshot", dir, "-m", "first", "--session", "s1", "--turn", "t1"}, true},
		{[]string{"list", dir}, false},
		{[]string{"write"}, true},
		{[]string{"record-write", dir, "a.txt"}, true},
		{[]string{"snapshot", dir, "-m", "second", "--session", "s1", "--turn", "t1", "--end-turn"}, true},
		{[]string{"list", dir}, false},
		{[]string{"snapshot", dir, "-m", "unchanged"}, false}, // created: false, on both
		{[]string{"turns", dir}, false},
		{[]string{"diff", dir, "@2"}, false},
		{[]string{"diff", dir, "@2", "@1", "--stat"}, false},
		{[]string{"log", dir, "a.txt"}, false},
		{[]string{"cat", dir, "@2", "a.txt"}, false},
		{[]string{"ls", dir, "@1"}, false},
		{[]string{"restore", dir, "@2", "--dry-run"}, false},
		{[]string{"undo", dir, "--dry-run"}, false},
		{[]string{"pin", dir, "@1"}, true},
		{[]string{"status"}, false},
		{[]string{"verify"}, false},
		{[]string{"version"}, false},
		{[]string{"diff", dir, "@9"}, false},           // exit 1
		{[]string{"list", dir, "--no-such"}, false},    // exit 2
		{[]string{"nonsense"}, false},                  // exit 2
		{[]string{"cat", dir, "@1", "missing"}, false}, // exit 1
	}
	for i, step := range steps {
		args := step.args
		if args[0] == "write" {
			writeFiles(t, dir, map[string]string{"a.txt": "two\n"})
			continue
		}
		a := s.ask(map[string]any{"id": map[string]any{"step": i}, "args": args, "now": now})
		if want := fmt.Sprintf(`{"step":%d}`, i); string(a.ID) != want {
			t.Fatalf("%v: id %s, want %s", args, a.ID, want)
		}
		r := b.runEnv([]string{"CASCKPT_NOW=" + now, "CASCKPT_HOME=" + other}, append(args, "--json")...)
		if !step.changes {
			compareServed(t, args, a, b.runEnv([]string{"CASCKPT_NOW=" + now}, append(args, "--json")...), func(s string) string { return s })
			continue
		}
		r.out = strings.ReplaceAll(r.out, other, b.store())
		r.err = strings.ReplaceAll(r.err, other, b.store())
		compareServed(t, args, a, r, numberIDs)
	}
	if code := s.exit(true); code != 0 {
		t.Fatalf("serve exited %d at the end of stdin, want 0", code)
	}
}

// compareServed fails t unless answer a is what the command's run r
// gave, both seen through norm.
func compareServed(t *testing.T, args []string, a serveAnswer, r result, norm func(string) string) {
	t.Helper()
	if a.Exit != r.code {
		t.Errorf("%v: exit %d, the command's %d (%q)", args, a.Exit, r.code, r.err)
	}
	if r.code == 0 {
		if got, want := norm(string(a.Result)), norm(strings.TrimSuffix(r.out, "\n")); got != want {
			t.Errorf("%v: result\n%s\nthe command's\n%s", args, got, want)
		}
		if a.Error != nil {
			t.Errorf("%v: error %q on success", args, *a.Error)
		}
		return
	}
	msg := norm(strings.TrimPrefix(strings.TrimSpace(r.err), errorPrefix))
	if a.Error == nil || norm(*a.Error) != msg {
		t.Errorf("%v: error %s, the command's %q", args, mustJSON(t, a.Error), msg)
	}
	if string(a.Result) != "null" {
		t.Errorf("%v: result %s on failure, want null", args, a.Result)
	}
}

// numberIDs replaces each snapshot ID in s, full or short (its first 12
// digits), by its number in order of first appearance.
func numberIDs(s string) string {
	seen := map[string]string{}
	return regexp.MustCompile(`\b[0-9a-f]{12}([0-9a-f]{52})?\b`).ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := seen[id[:12]]; !ok {
			seen[id[:12]] = fmt.Sprint("ID", len(seen))
		}
		return seen[id[:12]]
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestServeMalformedAndRefused: a line that is no request, and the
// commands serve does not run, are answered with exit 2 and serve goes
// on; clear --yes runs.
func TestServeMalformedAndRefused(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	s := b.serve()
	for _, line := range []string{`not json`, `{"id": 7, "args": "snapshot"}`, `{"id": 8}`, `[1, 2]`} {
		s.send(line)
		a := s.answer()
		if a.Exit != 2 || a.Error == nil || !strings.HasPrefix(*a.Error, "malformed request") || string(a.Result) != "null" {
			t.Errorf("%s: answer %+v, want exit 2, a malformed-request error", line, a)
		}
		if want := map[string]string{`{"id": 7, "args": "snapshot"}`: "7", `{"id": 8}`: "8"}[line]; want != "" && string(a.ID) != want {
			t.Errorf("%s: id %s, want %s", line, a.ID, want)
		}
	}
	for _, args := range [][]string{{"serve"}, {"mcp"}, {"hook", "claude-code"}, {"clear"}, {"clear", "--json"}, {"--json", "clear", "--yes=false"}} {
		a := s.ask(map[string]any{"id": "r", "args": args})
		if a.Exit != 2 || a.Error == nil || !strings.Contains(*a.Error, "serve does not run") {
			t.Errorf("%v: answer %+v, want refused with exit 2", args, a)
		}
	}
	if a := s.ask(map[string]any{"id": 1, "args": []string{"snapshot", dir}}); a.Exit != 0 {
		t.Fatalf("snapshot after the refusals: %+v", a)
	}
	if a := s.ask(map[string]any{"id": 2, "args": []string{"clear", "--yes"}}); a.Exit != 0 {
		t.Fatalf("clear --yes: %+v (stderr %q)", a, s.stderr.String())
	}
	if _, err := os.Stat(b.store()); !os.IsNotExist(err) {
		t.Fatalf("clear --yes left the store: %v", err)
	}
	if code := s.exit(true); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestServeCwdAndNow: cwd resolves a missing DIR and relative paths (a
// relative cwd against serve's own directory); now is CASCKPT_NOW for
// its request alone; a missing cwd is refused with exit 2.
func TestServeCwdAndNow(t *testing.T) {
	b := newBinEnv(t)
	parent := t.TempDir()
	dir := filepath.Join(parent, "proj")
	writeFiles(t, dir, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	c := b.command("serve")
	c.Dir = parent
	s := startServed(t, c)
	const then = "2001-02-03T04:05:06Z"
	a := s.ask(map[string]any{"id": 1, "args": []string{"snapshot", "-m", "here"}, "cwd": dir, "now": then})
	var snap struct{ Project string }
	if a.Exit != 0 || json.Unmarshal(a.Result, &snap) != nil || snap.Project != dir {
		t.Fatalf("snapshot with cwd: %+v, want project %s", a, dir)
	}
	writeFiles(t, dir, map[string]string{"sub/b.txt": "b2"})
	if a := s.ask(map[string]any{"id": 2, "args": []string{"snapshot", "."}, "cwd": "proj/sub"}); a.Exit != 0 {
		t.Fatalf("snapshot . in a relative cwd inside the project: %+v", a)
	}
	a = s.ask(map[string]any{"id": 3, "args": []string{"log", "b.txt"}, "cwd": filepath.Join(dir, "sub")})
	var log []struct{ Time string }
	if a.Exit != 0 || json.Unmarshal(a.Result, &log) != nil || len(log) != 2 {
		t.Fatalf("log b.txt from sub: %+v, want 2 snapshots", a)
	}
	if log[1].Time != then || log[0].Time == then {
		t.Fatalf("times %v: want %s for the request that gave now alone", log, then)
	}
	a = s.ask(map[string]any{"id": 4, "args": []string{"list"}, "cwd": filepath.Join(parent, "gone")})
	if a.Exit != 2 || a.Error == nil || !strings.Contains(*a.Error, "gone") {
		t.Fatalf("missing cwd: %+v, want exit 2 naming it", a)
	}
	a = s.ask(map[string]any{"id": 5, "args": []string{"list", "proj"}})
	var list []any
	if a.Exit != 0 || json.Unmarshal(a.Result, &list) != nil || len(list) != 2 {
		t.Fatalf("list proj in serve's own directory after the others: %+v", a)
	}
	if a := s.ask(map[string]any{"id": 6, "args": []string{"snapshot", dir}, "now": "yesterday"}); a.Exit != 2 || a.Error == nil || !strings.Contains(*a.Error, "CASCKPT_NOW") {
		t.Fatalf("a bad now: %+v, want the command's usage error", a)
	}
	if code := s.exit(true); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// startServed starts c, a casckpt serve command line.
func startServed(t *testing.T, c *exec.Cmd) *served {
	t.Helper()
	s := &served{t: t, cmd: c}
	c.Stderr = &s.stderr
	var err error
	if s.in, err = c.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewReader(stdout)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return s
}

// TestServeHoldsNoLockWhileIdle: between requests the store lock is free
// (this test takes it exclusively), so other processes snapshot and gc
// beside a serve, and serve sees what they did; --store on serve's
// command line is every request's store.
func TestServeHoldsNoLockWhileIdle(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	store := filepath.Join(t.TempDir(), "served")
	s := b.serve("--store", store)
	if a := s.ask(map[string]any{"id": 1, "args": []string{"snapshot", dir}}); a.Exit != 0 {
		t.Fatalf("snapshot: %+v", a)
	}
	f, err := os.OpenFile(filepath.Join(store, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if free, err := osfs.TryLock(f, true); err != nil || !free {
		t.Fatalf("the store lock is held while serve is idle: %v", err)
	}
	f.Close()
	writeFiles(t, dir, map[string]string{"a.txt": "b"})
	b.ok("--store", store, "snapshot", dir)
	b.ok("--store", store, "gc", "--json")
	a := s.ask(map[string]any{"id": 2, "args": []string{"list", dir}})
	var list []any
	if a.Exit != 0 || json.Unmarshal(a.Result, &list) != nil || len(list) != 2 {
		t.Fatalf("list after another process's snapshot: %+v", a)
	}
	if code := s.exit(true); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// stallingBucket is an S3 endpoint whose first request waits until
// release is closed; it tells arrived when that request comes. Every
// request is answered 503, so a command on it fails (exit 1).
func stallingBucket(t *testing.T) (url string, arrived, release chan struct{}) {
	arrived, release = make(chan struct{}), make(chan struct{})
	first := make(chan struct{}, 1)
	first <- struct{}{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-first:
			close(arrived)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return srv.URL, arrived, release
}

// servingOnStallingBucket starts serve on a stalling bucket and sends a
// status request, returning once the request is in progress.
func servingOnStallingBucket(t *testing.T) (*served, chan struct{}) {
	b := newBinEnv(t)
	url, arrived, release := stallingBucket(t)
	b.extra = []string{"AWS_ENDPOINT_URL=" + url, "AWS_ACCESS_KEY_ID=k", "AWS_SECRET_ACCESS_KEY=s", "AWS_REGION=us-east-1",
		"AWS_MAX_ATTEMPTS=1", "XDG_CACHE_HOME=" + t.TempDir()}
	s := b.serve("--store", "s3://bucket")
	if a := s.ask(map[string]any{"id": 0, "args": []string{"version"}}); a.Exit != 0 {
		t.Fatalf("version: %+v", a)
	}
	s.send(`{"id": 1, "args": ["status"]}`)
	<-arrived
	return s, release
}

// TestServeSIGTERMFinishesTheRequest: SIGTERM while a request waits on
// the bucket lets it finish and be answered, then serve exits 0 (stdin
// stays open: the signal ends it).
func TestServeSIGTERMFinishesTheRequest(t *testing.T) {
	s, release := servingOnStallingBucket(t)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	close(release)
	a := s.answer()
	if string(a.ID) != "1" || a.Exit != 1 || a.Error == nil {
		t.Fatalf("the request in progress at SIGTERM: %+v, want its failure on the 503s", a)
	}
	if code := s.exit(false); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0", code)
	}
}

// TestServeSIGINT: SIGINT interrupts the request in progress (answered
// with exit 130) and ends serve with 130; while idle it ends serve with
// 130 too.
func TestServeSIGINT(t *testing.T) {
	s, _ := servingOnStallingBucket(t)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	a := s.answer()
	if string(a.ID) != "1" || a.Exit != 130 || a.Error == nil || !strings.HasPrefix(*a.Error, "interrupted") {
		t.Fatalf("the request in progress at SIGINT: %+v, want exit 130, interrupted", a)
	}
	if code := s.exit(false); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130", code)
	}

	idle := newBinEnv(t).serve()
	if a := idle.ask(map[string]any{"id": 1, "args": []string{"version"}}); a.Exit != 0 {
		t.Fatalf("version: %+v", a)
	}
	if err := idle.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := idle.exit(false); code != 130 {
		t.Fatalf("exit %d after SIGINT while idle, want 130", code)
	}
}

// TestServeAnswersInOrder: requests written at once, before any answer
// is read, are answered one line each in their order, each with its id.
func TestServeAnswersInOrder(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	s := b.serve()
	s.send(strings.Join([]string{
		`{"id": "first", "args": ["snapshot", ` + string(mustJSON(t, dir)) + `]}`,
		`{"id": 2.5, "args": ["diff", ` + string(mustJSON(t, dir)) + `, "@7"]}`,
		`{"id": null, "args": ["version"]}`,
		`{"args": ["list", ` + string(mustJSON(t, dir)) + `]}`,
		`{"id": [1, {"x": true}], "args": ["list", "--bad-flag"]}`,
	}, "\n"))
	for _, want := range []struct {
		id   string
		exit int
	}{{`"first"`, 0}, {`2.5`, 1}, {`null`, 0}, {`null`, 0}, {`[1,{"x":true}]`, 2}} {
		a := s.answer()
		if string(a.ID) != want.id || a.Exit != want.exit {
			t.Fatalf("answer %+v (id %s), want id %s exit %d", a, a.ID, want.id, want.exit)
		}
	}
	if code := s.exit(true); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
