package claudecode

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt"
)

// testHook is a Hook over a store in a temporary directory, with its
// state in that directory and a fixed clock.
func testHook(t *testing.T, now time.Time) (Hook, *bytes.Buffer, *[]string) {
	t.Helper()
	dir := t.TempDir()
	out, unlogged := &bytes.Buffer{}, &[]string{}
	clock := func() time.Time { return now }
	return Hook{
		Open: func() (*casckpt.Store, error) {
			return casckpt.Open(dir, casckpt.Options{Now: clock, HomeDir: "/nonexistent"})
		},
		Now:       clock,
		KeepTurns: DefaultKeepTurns, KeepDays: DefaultKeepDays,
		Dir: dir, Out: out,
		Unlogged: func(line string) { *unlogged = append(*unlogged, line) },
	}, out, unlogged
}

// TestRunTurn: a prompt, a Write's PreToolUse and PostToolUse and a Stop
// leave one ended turn titled with the prompt, holding the write.
func TestRunTurn(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h, out, _ := testHook(t, now)
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(project, "a.go")
	for _, ev := range []string{
		`{"session_id":"s1","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt_id":"p1","prompt":"add a.go\nplease"}`,
		`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","prompt_id":"p1","tool_name":"Write","tool_input":{"file_path":"a.go"}}`,
		"write",
		`{"session_id":"s1","cwd":%q,"hook_event_name":"PostToolUse","prompt_id":"p1","tool_name":"Write","tool_input":{"file_path":"a.go"}}`,
		`{"session_id":"s1","cwd":%q,"hook_event_name":"Stop","prompt_id":"p1"}`,
	} {
		if ev == "write" {
			if err := os.WriteFile(file, []byte("package x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		h.Run(context.Background(), strings.NewReader(strings.ReplaceAll(ev, "%q", `"`+project+`"`)))
	}
	if out.Len() != 0 {
		t.Fatalf("stdout: %q", out)
	}
	if log := RecentMisses(h.Dir, now, 5); len(log) != 0 {
		t.Fatalf("hook log: %q", log)
	}
	store, err := h.Open()
	if err != nil {
		t.Fatal(err)
	}
	turns, err := store.Turns(context.Background(), project, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 1 || turns[0].ID != "p1" || turns[0].Open() || turns[0].Title != "add a.go" || turns[0].FilesChanged != 1 {
		t.Fatalf("turns: %+v", turns)
	}
}

// TestRunLogsAndTellsOnce: events that cannot be acted on are logged one
// line each, ignored events are not, and a prompt that gets no
// checkpoint tells the user once per session.
func TestRunLogsAndTellsOnce(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h, out, unlogged := testHook(t, now)
	h.Open = func() (*casckpt.Store, error) { return nil, errors.New("store busy") }
	for _, ev := range []string{
		"",
		"{not json",
		`{"hook_event_name":"Notification","session_id":"s"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Read","session_id":"s","cwd":"/x"}`,
		`{"hook_event_name":"Stop","cwd":"/x"}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/x"}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/x"}`,
	} {
		h.Run(context.Background(), strings.NewReader(ev))
	}
	log := RecentMisses(h.Dir, now, 10)
	want := []string{"- empty stdin", "- malformed event JSON", "Stop the event has no session_id", "UserPromptSubmit store busy", "UserPromptSubmit store busy"}
	if len(log) != len(want) {
		t.Fatalf("hook log: %q", log)
	}
	for i, w := range want {
		if !strings.HasPrefix(log[i], "2026-03-01T12:00:00Z "+w) {
			t.Errorf("log line %d: %q, want %q", i, log[i], w)
		}
	}
	if n := strings.Count(out.String(), "systemMessage"); n != 1 || !strings.Contains(out.String(), "no checkpoint of this prompt: store busy") {
		t.Fatalf("told %d times: %q", n, out)
	}
	if len(*unlogged) != 0 {
		t.Fatalf("unlogged: %q", *unlogged)
	}
	if got := RecentMisses(h.Dir, now.Add(25*time.Hour), 10); len(got) != 0 {
		t.Fatalf("misses of a day later: %q", got)
	}
	if got := RecentMisses(h.Dir, now, 2); len(got) != 2 || !strings.Contains(got[1], "store busy") {
		t.Fatalf("newest 2 misses: %q", got)
	}
}

// TestLogWithoutDirectory: with no directory, a log line goes to
// Unlogged, and the user is told every time.
func TestLogWithoutDirectory(t *testing.T) {
	h, out, unlogged := testHook(t, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	h.Dir = ""
	h.Open = func() (*casckpt.Store, error) { return nil, errors.New("no store") }
	for range 2 {
		h.Run(context.Background(), strings.NewReader(`{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/x"}`))
	}
	if len(*unlogged) != 2 || (*unlogged)[0] != "2026-03-01T12:00:00Z UserPromptSubmit no store\n" {
		t.Fatalf("unlogged: %q", *unlogged)
	}
	if n := strings.Count(out.String(), "systemMessage"); n != 2 {
		t.Fatalf("told %d times: %q", n, out)
	}
}
