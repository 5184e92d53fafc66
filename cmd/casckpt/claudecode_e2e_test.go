package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestClaudeCodeEndToEnd drives the real Claude Code CLI (print mode, from
// testdata/claude-e2e's lockfile; .ci/test installs it) against a scripted
// Anthropic Messages API server on 127.0.0.1, with the project's
// .claude/settings.json as `casckpt hook claude-code --print-settings`
// prints it: three prompts of one session, the first writing a new file
// (Write), the second editing an existing one (Read, Edit), the third
// running a shell command that deletes a file and makes another (Bash).
// Then `turns` shows the three turns of the session with what each
// changed, `undo` of the second reverts its edit and nothing else; a
// fourth prompt cut off (--max-turns) after a write is a turn of its own
// that the CLI's SessionEnd ended, interrupted; the hook logged no miss.
// It runs the newest CLI and the one a plain npm install gets on Node 20.
func TestClaudeCodeEndToEnd(t *testing.T) {
	for _, cli := range []struct{ version, dir string }{{"2.1.332", "@anthropic-ai/claude-code"}, {"2.1.197", "claude-code-2.1.197"}} {
		version, dir := cli.version, cli.dir
		t.Run(version, func(t *testing.T) {
			claude, err := filepath.Abs(filepath.Join("testdata", "claude-e2e", "node_modules", dir, "bin", "claude.exe"))
			must(t, err)
			if _, err := os.Stat(claude); err != nil {
				t.Skip("Claude Code " + version + " is not installed: run npm ci in cmd/casckpt/testdata/claude-e2e")
			}
			testClaudeCode(t, claude)
		})
	}
}

// testClaudeCode is TestClaudeCodeEndToEnd with the CLI at claude.
func testClaudeCode(t *testing.T, claude string) {
	b := newBinEnv(t)
	proj, err := filepath.EvalSymlinks(t.TempDir()) // the cwd Claude Code reports
	must(t, err)
	want := map[string]string{"notes.txt": "alpha\nbeta\ngamma\n", "gone.txt": "to be deleted\n", "keep.txt": "untouched\n"}
	writeFiles(t, proj, want)
	want[".claude/settings.json"] = b.ok("hook", "claude-code", "--print-settings").out
	writeFiles(t, proj, map[string]string{".claude/settings.json": want[".claude/settings.json"]})

	file := func(name string) string { return filepath.Join(proj, name) }
	prompts := []scriptedPrompt{
		{"step one: write a new file", []scriptedCall{
			{"Write", map[string]any{"file_path": file("new.txt"), "content": "written in turn one\n"}}}},
		{"step two: edit notes.txt", []scriptedCall{
			{"Read", map[string]any{"file_path": file("notes.txt")}},
			{"Edit", map[string]any{"file_path": file("notes.txt"), "old_string": "beta", "new_string": "BETA", "replace_all": false}}}},
		{"step three: run a command", []scriptedCall{
			{"Bash", map[string]any{"command": `rm gone.txt && printf 'made by bash\n' > bash.txt`, "description": "delete and make a file"}}}},
		{"step four: cut off", []scriptedCall{ // run with --max-turns 1: the Bash never runs
			{"Write", map[string]any{"file_path": file("late.txt"), "content": "written in turn four\n"}},
			{"Bash", map[string]any{"command": "rm keep.txt", "description": "never runs"}}}},
	}
	model := &scriptedModel{prompts: prompts}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)

	c := claudeCode{t: t, bin: claude, proj: proj, home: t.TempDir(), tmp: t.TempDir(), url: srv.URL}
	session := c.prompt(prompts[0].prompt, "", 0)
	for _, p := range prompts[1:3] {
		if got := c.prompt(p.prompt, session, 0); got != session {
			t.Fatalf("--resume %s went on in session %s", session, got)
		}
	}
	if errs := model.failures(); len(errs) > 0 {
		t.Fatalf("the scripted model saw: %q", errs)
	}
	delete(want, "gone.txt")
	maps.Copy(want, map[string]string{"new.txt": "written in turn one\n", "notes.txt": "alpha\nBETA\ngamma\n", "bash.txt": "made by bash\n"})
	checkTree(t, proj, want)

	turns := turnsOf(t, b, proj)
	checkTurns(t, b, proj, session, prompts[:3], turns, [][]string{{"added new.txt"}, {"modified notes.txt"}, {"added bash.txt", "deleted gone.txt"}})
	second := turns[1]["turn"].(string)
	undo := jsonOf[map[string]any](t, b.ok("undo", proj, second, "--json").out)
	if fmt.Sprint(undo["reverted"]) != "[notes.txt]" || len(undo["conflicts"].([]any)) != 0 || undo["turn"] != second {
		t.Errorf("undo of the second turn: %v", undo)
	}
	want["notes.txt"] = "alpha\nbeta\ngamma\n"
	checkTree(t, proj, want)

	// A prompt cut off (as by Esc) gets no Stop: the SessionEnd of the
	// CLI's exit ends its turn, marked interrupted.
	c.prompt(prompts[3].prompt, session, 1)
	want["late.txt"] = "written in turn four\n"
	checkTree(t, proj, want)
	turns = turnsOf(t, b, proj)
	if len(turns) != 4 || turns[0]["title"] != prompts[3].prompt || turns[0]["session"] != session || turns[0]["end"] == nil ||
		turns[0]["interrupted"] != true || !slices.Equal(turnChanges(t, b, proj, turns[0]), []string{"added late.txt"}) {
		t.Fatalf("the cut-off prompt's turn: %v", turns)
	}
	if turns[2]["undone_by"] == nil || turns[1]["undone_by"] != nil || turns[3]["undone_by"] != nil {
		t.Errorf("turns after the undo: %v", turns)
	}
	if errs := model.failures(); len(errs) > 0 {
		t.Fatalf("the scripted model saw: %q", errs)
	}
	if log, err := os.ReadFile(filepath.Join(b.store(), "hook.log")); len(log) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
		t.Errorf("hook.log: %v %q", err, log)
	}
}

// checkTurns fails the test unless turns (newest first) are those of the
// prompts, in session, each ended by its Stop, labelled with Claude
// Code's prompt_id and titled with its prompt, and changes[i] (sorted
// "status path") is what the i-th changed.
func checkTurns(t *testing.T, b *binEnv, proj, session string, prompts []scriptedPrompt, turns []map[string]any, changes [][]string) {
	t.Helper()
	if len(turns) != len(prompts) {
		t.Fatalf("turns: %d, want %d: %v", len(turns), len(prompts), turns)
	}
	for i, p := range prompts {
		turn := turns[len(turns)-1-i]
		id, _ := turn["turn"].(string)
		if id == "" || strings.HasPrefix(id, "p-") || turn["session"] != session || turn["title"] != p.prompt ||
			turn["end"] == nil || turn["interrupted"] != false || turn["undone_by"] != nil {
			t.Fatalf("turn %d: %v", i+1, turn)
		}
		if got := turnChanges(t, b, proj, turn); !slices.Equal(got, changes[i]) {
			t.Errorf("turn %d changed %q, want %q", i+1, got, changes[i])
		}
	}
}

// turnChanges is what an ended turn changed, as `diff START END --json`
// says: "status path", sorted.
func turnChanges(t *testing.T, b *binEnv, proj string, turn map[string]any) []string {
	t.Helper()
	diff := jsonOf[map[string]any](t, b.ok("diff", proj, turn["start"].(string), fmt.Sprint(turn["end"]), "--json").out)
	var got []string
	for _, f := range diff["files"].([]any) {
		f := f.(map[string]any)
		got = append(got, fmt.Sprint(f["status"], " ", f["path"]))
	}
	slices.Sort(got)
	return got
}

// claudeCode runs the real Claude Code CLI in print mode in proj, against
// the scripted model at url, with a fresh HOME and its own TMPDIR.
type claudeCode struct {
	t                         *testing.T
	bin, proj, home, tmp, url string
}

// prompt sends one prompt (going on with session resume when it is not
// empty), allowing the tools the script calls, and returns the session
// the CLI reports. With maxTurns > 0 the CLI stops after that many model
// calls, as it does for a person's Esc: without a Stop, exit status 1,
// error_max_turns. Any other outcome, or a tool denied, fails the test.
func (c claudeCode) prompt(prompt, resume string, maxTurns int) string {
	c.t.Helper()
	// Generous: the CLI starts in about a second, each hook in milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-p", prompt, "--output-format", "json", "--allowedTools", "Read,Write,Edit,Bash"}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	subtype := "success"
	if maxTurns > 0 {
		args, subtype = append(args, "--max-turns", fmt.Sprint(maxTurns)), "error_max_turns"
	}
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.proj
	// The SessionEnd hook's time is its settings' timeout (see
	// claudecode.SessionEndTimeout), not the CLI's short default.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + c.home, "TMPDIR=" + c.tmp,
		"ANTHROPIC_BASE_URL=" + c.url, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res struct { // the JSON result of print mode
		SessionID string `json:"session_id"`
		Subtype   string `json:"subtype"`
		Denials   []any  `json:"permission_denials"`
	}
	if (err != nil) != (maxTurns > 0) || json.Unmarshal(out, &res) != nil || res.Subtype != subtype || len(res.Denials) > 0 || res.SessionID == "" {
		c.t.Fatalf("claude -p %q: %v\nstdout: %s\nstderr: %s", prompt, err, out, stderr.String())
	}
	return res.SessionID
}

// checkTree fails the test unless dir holds exactly the files of want
// (slash-separated paths) with their bytes.
func checkTree(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		got[filepath.ToSlash(rel)] = string(data)
		return err
	})
	must(t, err)
	if !maps.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
}

// scriptedPrompt is what the scripted model answers to a prompt: its tool
// calls, one per answer, then a short text that ends the turn.
type scriptedPrompt struct {
	prompt string
	calls  []scriptedCall
}

// scriptedCall is a tool_use block: the tool's name and input.
type scriptedCall struct {
	name  string
	input map[string]any
}

// scriptedModel is an Anthropic Messages API server (POST /v1/messages,
// streamed as server-sent events, the way Claude Code asks for it) that
// plays a script. It is stateless: an answer is picked from the request,
// by the newest user message holding one of the script's prompts and the
// number of tool results after it. A request without tools (a side
// query) gets a short text.
type scriptedModel struct {
	prompts []scriptedPrompt

	mu     sync.Mutex
	ids    int
	errors map[string]bool // failed tool results, requests off the script
}

// failures are the tool results that were errors and the requests the
// script had no answer for, each once.
func (m *scriptedModel) failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.errors))
}

// fail notes a failure for failures.
func (m *scriptedModel) fail(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.errors == nil {
		m.errors = map[string]bool{}
	}
	m.errors[fmt.Sprintf(format, args...)] = true
}

// messagesRequest is the part of a Messages API request the model reads.
type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
}

// contentBlock is one block of a message's content.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     any             `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// ServeHTTP answers POST /v1/messages from the script (streamed when the
// request asks), count_tokens with a constant, anything else with 404.
func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		serveJSON(w, map[string]int{"input_tokens": 100})
		return
	case r.Method != http.MethodPost || path != "/v1/messages": // e.g. a connectivity probe
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		m.fail("malformed request: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	blocks, stop := m.answer(req)
	m.mu.Lock()
	m.ids++
	id := fmt.Sprintf("msg_%04d", m.ids)
	for i := range blocks {
		if blocks[i].Type == "tool_use" {
			blocks[i].ID = fmt.Sprintf("toolu_%04d_%d", m.ids, i)
		}
	}
	m.mu.Unlock()
	usage := map[string]int{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		serveJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	streamMessage(w, id, req.Model, blocks, stop, usage)
}

// answer picks the answer to req: the next tool call of the prompt it
// goes on with, else a text ending the turn.
func (m *scriptedModel) answer(req messagesRequest) ([]contentBlock, string) {
	if len(req.Tools) == 0 {
		return []contentBlock{{Type: "text", Text: "Scripted side answer"}}, "end_turn"
	}
	var prompt *scriptedPrompt
	results := 0
	for _, msg := range req.Messages {
		if msg.Role != "user" {
			continue
		}
		var blocks []contentBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			var s string
			json.Unmarshal(msg.Content, &s)
			blocks = []contentBlock{{Type: "text", Text: s}}
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_result":
				results++
				if b.IsError {
					m.fail("tool result %s is an error: %s", b.ToolUseID, b.Content)
				}
			case b.Type == "text":
				for i := range m.prompts {
					if strings.Contains(b.Text, m.prompts[i].prompt) {
						prompt, results = &m.prompts[i], 0
					}
				}
			}
		}
	}
	switch {
	case prompt == nil:
		m.fail("a request with tools and none of the script's prompts")
		return []contentBlock{{Type: "text", Text: "No scripted prompt."}}, "end_turn"
	case results < len(prompt.calls):
		c := prompt.calls[results]
		return []contentBlock{{Type: "tool_use", Name: c.name, Input: c.input}}, "tool_use"
	}
	return []contentBlock{{Type: "text", Text: "Done: " + prompt.prompt}}, "end_turn"
}

// serveJSON answers with v as JSON.
func serveJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// streamMessage answers with the message as the Messages API streams it:
// message_start; for each block content_block_start, one delta (a text
// block's text, a tool_use block's whole input as partial JSON) and
// content_block_stop; message_delta with the stop reason; message_stop.
func streamMessage(w http.ResponseWriter, id, model string, blocks []contentBlock, stop string, usage map[string]int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(name string, data map[string]any) {
		data["type"] = name
		line, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, line)
	}
	event("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, b := range blocks {
		var start, delta map[string]any
		if b.Type == "text" {
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b.Text}
		} else {
			input, _ := json.Marshal(b.Input)
			start = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(input)}
		}
		event("content_block_start", map[string]any{"index": i, "content_block": start})
		event("content_block_delta", map[string]any{"index": i, "delta": delta})
		event("content_block_stop", map[string]any{"index": i})
	}
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 20}})
	event("message_stop", map[string]any{})
}
