package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/osfs"
)

// hookSession plays Claude Code hook payloads (the fixtures under
// testdata/hooks) through the built binary.
type hookSession struct {
	t       *testing.T
	b       *binEnv
	cwd     string
	session string
	flags   []string // after hook claude-code
}

// fixture reads testdata/hooks/NAME.json with each {{key}} replaced by
// vars[key] (plus session and cwd).
func (h *hookSession) fixture(name string, vars map[string]string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "hooks", name+".json"))
	if err != nil {
		h.t.Fatal(err)
	}
	s := strings.ReplaceAll(string(data), "{{session}}", h.session)
	s = strings.ReplaceAll(s, "{{cwd}}", h.cwd)
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

// send runs casckpt hook claude-code with stdin, which must exit 0 and
// print nothing on stdout.
func (h *hookSession) send(stdin string) result {
	h.t.Helper()
	r := h.sendTold(stdin)
	if r.out != "" {
		h.t.Fatalf("hook: stdout %q, stderr %q", r.out, r.err)
	}
	return r
}

// sendTold is send for an event whose hook may tell the user something on
// stdout; it must still exit 0.
func (h *hookSession) sendTold(stdin string) result {
	h.t.Helper()
	c := h.b.command(append([]string{"hook", "claude-code"}, h.flags...)...)
	c.Stdin = strings.NewReader(stdin)
	r := h.b.runCmd(c)
	if r.code != 0 {
		h.t.Fatalf("hook: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	return r
}

// event sends fixture name with vars.
func (h *hookSession) event(name string, vars map[string]string) {
	h.t.Helper()
	h.send(h.fixture(name, vars))
}

// hookLog returns the lines of the store's hook log.
func (h *hookSession) hookLog() []string {
	data, err := os.ReadFile(filepath.Join(h.b.store(), "hook.log"))
	if err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// write plays a Write tool call: PreToolUse, the write, PostToolUse.
func (h *hookSession) write(rel, content string) {
	h.t.Helper()
	vars := map[string]string{"file": filepath.Join(h.cwd, rel), "content": strings.TrimSpace(content)}
	h.event("pre_tool_use_write", vars)
	writeFiles(h.t, h.cwd, map[string]string{rel: content})
	h.event("post_tool_use_write", vars)
}

// edit plays an Edit tool call that replaces old by new in rel.
func (h *hookSession) edit(rel, old, new string) {
	h.t.Helper()
	vars := map[string]string{"file": filepath.Join(h.cwd, rel), "old": old, "new": new}
	h.event("pre_tool_use_edit", vars)
	data, err := os.ReadFile(filepath.Join(h.cwd, rel))
	if err != nil {
		h.t.Fatal(err)
	}
	writeFiles(h.t, h.cwd, map[string]string{rel: strings.Replace(string(data), old, new, 1)})
	h.event("post_tool_use_edit", vars)
}

// TestHookScriptedSession: three prompts of a Claude Code session, with
// Write, Edit and Bash tool calls and a person's edit between prompts,
// leave three turns; undo of the second reverts exactly what it changed.
func TestHookScriptedSession(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "8f2c1a7e-0b1d-4c55-9e7a-2d3f4b5c6d7e"}
	writeFiles(t, h.cwd, map[string]string{"README.md": "demo\n", "notes.txt": "mine\n"})

	h.event("user_prompt_submit", map[string]string{"prompt": "create app.py"})
	h.write("app.py", "print('one')\n")
	h.event("stop", nil)

	h.event("user_prompt_submit", map[string]string{"prompt": "change it and add a helper"})
	h.edit("app.py", "one", "two")
	h.write("lib/helper.py", "def helper(): pass\n")
	h.event("stop", nil)

	writeFiles(t, h.cwd, map[string]string{"notes.txt": "mine, edited by a person\n"}) // between prompts

	h.event("user_prompt_submit", map[string]string{"prompt": "run the build"})
	bash := map[string]string{"command": "echo built > build.txt"}
	h.event("pre_tool_use_bash", bash)
	writeFiles(t, h.cwd, map[string]string{"build.txt": "built\n"})
	h.event("post_tool_use_bash", bash)
	h.event("stop", nil)

	turns := turnsOf(t, h.b, h.cwd)
	if len(turns) != 3 {
		t.Fatalf("turns: %v", turns)
	}
	for i, tr := range turns {
		if tr["session"] != h.session || tr["end"] == nil || !strings.HasPrefix(tr["turn"].(string), "p-") {
			t.Errorf("turn %d: %v", i, tr)
		}
	}
	if turns[1]["files_changed"] != 2.0 || turns[2]["files_changed"] != 1.0 || turns[0]["files_changed"] != 1.0 {
		t.Errorf("files changed per turn (newest first): %v", turns)
	}
	h.b.ok("undo", h.cwd, turns[1]["turn"].(string))
	want := map[string]string{"README.md": "demo\n", "notes.txt": "mine, edited by a person\n",
		"app.py": "print('one')\n", "build.txt": "built\n"}
	if got := readFiles(t, h.cwd); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after undo of the second prompt:\n%v\nwant\n%v", got, want)
	}
	if log := h.hookLog(); !slices.Equal(log, []string{""}) {
		t.Errorf("hook log of a clean session: %q", log)
	}
}

// TestHookOncePerPrompt: a prompt's tool calls snapshot a project once, and
// the snapshot before a tool in another project starts the prompt's turn
// there; Stop ends the turn in both.
func TestHookOncePerPrompt(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	other := t.TempDir()
	writeFiles(t, h.cwd, map[string]string{"a.txt": "a\n"})
	writeFiles(t, other, map[string]string{".git/HEAD": "ref: refs/heads/main\n", "b.txt": "b\n"})
	h.event("user_prompt_submit", map[string]string{"prompt": "go"})
	h.write("a.txt", "a2\n")
	h.write("a.txt", "a3\n")
	h.event("pre_tool_use_write", map[string]string{"file": filepath.Join(other, "b.txt"), "content": "b2"})
	writeFiles(t, other, map[string]string{"b.txt": "b2\n"})
	h.event("stop", nil)
	if list := jsonOf[[]map[string]any](t, h.b.ok("list", h.cwd, "--json").out); len(list) != 2 {
		t.Errorf("cwd: want the prompt's start and its end, got %v", list)
	}
	for _, dir := range []string{h.cwd, other} {
		if turns := turnsOf(t, h.b, dir); len(turns) != 1 || turns[0]["end"] == nil || turns[0]["files_changed"] != 1.0 {
			t.Errorf("turns of %s: %v", dir, turns)
		}
	}
}

// TestHookBadInput: unknown events and fields are ignored; malformed JSON
// and an empty stdin exit 0, print nothing and leave a line in the log.
func TestHookBadInput(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	h.event("unknown_event", nil)
	if _, err := os.Stat(h.b.store()); !os.IsNotExist(err) {
		t.Errorf("an unknown event made the store: %v", err)
	}
	writeFiles(t, h.cwd, map[string]string{"a.txt": "a\n"})
	h.event("unknown_fields", map[string]string{"prompt": "hi", "prompt_id": "prompt-7"})
	if turns := turnsOf(t, h.b, h.cwd); len(turns) != 1 || turns[0]["turn"] != "prompt-7" {
		t.Errorf("a prompt with unknown fields and a prompt_id: %v", turns)
	}
	malformed, err := os.ReadFile(filepath.Join("testdata", "hooks", "malformed.json"))
	if err != nil {
		t.Fatal(err)
	}
	h.send(string(malformed))
	h.send("")
	log := h.hookLog()
	if len(log) != 2 || !strings.Contains(log[0], " - malformed event JSON") || !strings.Contains(log[1], " - empty stdin") {
		t.Errorf("hook log: %q", log)
	}
}

// TestHookBusyStore: a hook that finds the store locked gives up, exits 0
// and logs the miss; on a prompt it tells the user, once per session, as
// a JSON systemMessage (the one thing it may print), and status shows the
// miss.
func TestHookBusyStore(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	writeFiles(t, h.cwd, map[string]string{"a.txt": "a\n"})
	h.b.ok("snapshot", h.cwd)
	f, err := os.OpenFile(filepath.Join(h.b.store(), "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := osfs.Lock(f, true); err != nil {
		t.Fatal(err)
	}
	prompt := h.fixture("user_prompt_submit", map[string]string{"prompt": "go"})
	told := jsonOf[map[string]string](t, h.sendTold(prompt).out)
	if len(told) != 1 || !strings.Contains(told["systemMessage"], "casckpt: no checkpoint of this prompt: ") || !strings.Contains(told["systemMessage"], "busy") {
		t.Errorf("the user is told: %v", told)
	}
	h.send(prompt) // once per session
	if r := h.sendTold(strings.ReplaceAll(prompt, `"s1"`, `"s2"`)); !strings.Contains(r.out, "systemMessage") {
		t.Errorf("another session is told again: %q", r.out)
	}
	log := h.hookLog()
	if len(log) != 3 || !strings.Contains(log[0], " UserPromptSubmit ") || !strings.Contains(log[0], "busy") {
		t.Errorf("hook log: %q", log)
	}
	f.Close() // unlocked
	st := jsonOf[map[string]any](t, h.b.ok("status", "--json").out)
	if misses, _ := st["hook_misses"].([]any); len(misses) != 3 || misses[2] != log[2] {
		t.Errorf("status: hook_misses %v, want the log %q", st["hook_misses"], log)
	}
	if out := h.b.ok("status").out; !strings.Contains(out, "hook miss: "+log[2]+"\n") {
		t.Errorf("status text:\n%s", out)
	}
}

// TestHookPrintSettings: the settings block runs this binary for the six
// events, with the tool matchers, the store CASCKPT_HOME names and the
// retention given, as indented JSON to paste.
func TestHookPrintSettings(t *testing.T) {
	b := newBinEnv(t)
	out := b.ok("hook", "claude-code", "--print-settings", "--keep-turns", "80").out
	if !strings.HasPrefix(out, "{\n  \"hooks\": {\n") {
		t.Errorf("not indented:\n%s", out)
	}
	doc := jsonOf[map[string]map[string][]map[string]any](t, out)
	hooks := doc["hooks"]
	if want := []string{"PostToolUse", "PreToolUse", "SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"}; !slices.Equal(slices.Sorted(maps.Keys(hooks)), want) {
		t.Fatalf("events %v, want %v", slices.Sorted(maps.Keys(hooks)), want)
	}
	if hooks["PreToolUse"][0]["matcher"] != "Write|Edit|MultiEdit|NotebookEdit|Bash" || hooks["PostToolUse"][0]["matcher"] != "Write|Edit|MultiEdit|NotebookEdit" {
		t.Errorf("matchers: %v", hooks)
	}
	cmd := hooks["Stop"][0]["hooks"].([]any)[0].(map[string]any)
	want := b.bin + " hook claude-code --store " + b.store() + " --keep-turns 80 --keep-days 7"
	if cmd["type"] != "command" || cmd["command"] != want {
		t.Errorf("command: %v, want %s", cmd, want)
	}
}

// TestHookInstall: --install merges the hooks into an existing
// settings.json, keeping the person's other settings and hooks (and their
// order); installing again replaces it; --uninstall takes out exactly what
// it put in.
func TestHookInstall(t *testing.T) {
	b := newBinEnv(t)
	mine := `{
  "permissions": {"allow": ["Bash"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}]
  },
  "model": "x"
}
`
	settings := filepath.Join(b.home, ".claude", "settings.json")
	writeFiles(t, b.home, map[string]string{".claude/settings.json": mine})
	out := b.ok("hook", "claude-code", "--install", "--user").out
	if !strings.HasPrefix(out, settings+": added the casckpt hook (UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionStart, SessionEnd)") {
		t.Errorf("install said %q", out)
	}
	read := func() map[string]any {
		data, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		return jsonOf[map[string]any](t, string(data))
	}
	doc := read()
	hooks := doc["hooks"].(map[string]any)
	if doc["model"] != "x" || fmt.Sprint(doc["permissions"]) != "map[allow:[Bash]]" || len(hooks) != 6 {
		t.Errorf("after install: %v", doc)
	}
	if stop := hooks["Stop"].([]any); len(stop) != 2 || fmt.Sprint(stop[0]) != "map[hooks:[map[command:notify-send done type:command]]]" ||
		!strings.Contains(fmt.Sprint(stop[1]), b.bin+" hook claude-code --store "+b.store()) {
		t.Errorf("Stop hooks: %v", stop)
	}
	data, _ := os.ReadFile(settings)
	if i, j := strings.Index(string(data), `"permissions"`), strings.Index(string(data), `"model"`); i < 0 || j < i {
		t.Errorf("the keys' order changed:\n%s", data)
	}
	if out := b.ok("hook", "claude-code", "--install", "--user", "--keep-days", "30").out; !strings.Contains(out, ": replaced the casckpt hook") {
		t.Errorf("install again said %q", out)
	}
	if stop := read()["hooks"].(map[string]any)["Stop"].([]any); len(stop) != 2 || !strings.Contains(fmt.Sprint(stop[1]), "--keep-days 30") {
		t.Errorf("Stop hooks after a second install: %v", stop)
	}
	if out := b.ok("hook", "claude-code", "--uninstall", "--user").out; out != settings+": removed the casckpt hook from 6 events\n" {
		t.Errorf("uninstall said %q", out)
	}
	want := jsonOf[map[string]any](t, mine)
	if got := read(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after uninstall:\n%v\nwant\n%v", got, want)
	}
	// --project (the default) writes .claude/settings.json of the current
	// directory, made when missing; a file that is not JSON is refused.
	proj := t.TempDir()
	c := b.command("hook", "claude-code", "--install")
	c.Dir = proj
	if r := b.runCmd(c); r.code != 0 || len(read()) != 3 {
		t.Fatalf("install --project: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "settings.json")); err != nil {
		t.Error(err)
	}
	writeFiles(t, b.home, map[string]string{".claude/settings.json": "{not json"})
	failsWith(t, b.run("hook", "claude-code", "--install", "--user"), 1, "is not a JSON object")
	if data, _ := os.ReadFile(settings); string(data) != "{not json" {
		t.Errorf("a bad settings file was changed: %q", data)
	}
	failsWith(t, b.run("hook", "claude-code", "--user"), 2, "--install or --uninstall")
}

// TestHookLogBounded: a hook log past 1 MiB is moved to hook.log.1 before
// the next line.
func TestHookLogBounded(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	os.MkdirAll(h.b.store(), 0o700)
	old := strings.Repeat("2026-01-01T00:00:00Z - an old line\n", 1<<20/32)
	if err := os.WriteFile(filepath.Join(h.b.store(), "hook.log"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	h.send("")
	if log := h.hookLog(); len(log) != 1 || !strings.Contains(log[0], "empty stdin") {
		t.Errorf("hook log after the move: %q", log)
	}
	if moved, err := os.ReadFile(filepath.Join(h.b.store(), "hook.log.1")); err != nil || string(moved) != old {
		t.Errorf("hook.log.1: %d bytes, %v", len(moved), err)
	}
}

// withPromptID adds a prompt_id to a fixture's event.
func withPromptID(t *testing.T, event, id string) string {
	t.Helper()
	m := jsonOf[map[string]any](t, event)
	m["prompt_id"] = id
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestHookPromptID: an event with a prompt_id belongs to that prompt, not
// to the session's newest.
func TestHookPromptID(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	other := t.TempDir()
	writeFiles(t, h.cwd, map[string]string{"a.txt": "a\n"})
	writeFiles(t, other, map[string]string{"go.mod": "module x\n", "b.txt": "b\n"})
	h.send(withPromptID(t, h.fixture("user_prompt_submit", map[string]string{"prompt": "first"}), "A"))
	h.send(withPromptID(t, h.fixture("user_prompt_submit", map[string]string{"prompt": "second"}), "B"))
	h.send(withPromptID(t, h.fixture("pre_tool_use_write", map[string]string{"file": filepath.Join(other, "b.txt"), "content": "b2"}), "A"))
	h.send(withPromptID(t, h.fixture("stop", nil), "A"))
	if turns := turnsOf(t, h.b, other); len(turns) != 1 || turns[0]["turn"] != "A" || turns[0]["end"] == nil {
		t.Errorf("turns of the other project: %v", turns)
	}
	turns := turnsOf(t, h.b, h.cwd)
	if len(turns) != 2 || turns[0]["turn"] != "B" || turns[0]["end"] != nil || turns[1]["turn"] != "A" || turns[1]["end"] == nil {
		t.Errorf("turns of cwd: %v", turns)
	}
}

// TestHookRecordsWrites: with no Stop (the session died), the writes the
// PostToolUse events recorded let restore --safe take back the agent's
// work and keep a person's edit.
func TestHookRecordsWrites(t *testing.T) {
	h := &hookSession{t: t, b: newBinEnv(t), cwd: t.TempDir(), session: "s1"}
	writeFiles(t, h.cwd, map[string]string{"nb.ipynb": "{}\n", "mine.txt": "mine\n"})
	h.event("user_prompt_submit", map[string]string{"prompt": "edit the notebook"})
	vars := map[string]string{"file": filepath.Join(h.cwd, "nb.ipynb"), "content": "print(1)"}
	h.event("pre_tool_use_notebook_edit", vars)
	writeFiles(t, h.cwd, map[string]string{"nb.ipynb": `{"cells": ["print(1)"]}` + "\n"})
	h.event("post_tool_use_notebook_edit", vars)
	h.write("new.txt", "agent\n")
	writeFiles(t, h.cwd, map[string]string{"mine.txt": "mine, edited\n"})
	if turns := turnsOf(t, h.b, h.cwd); len(turns) != 1 || turns[0]["end"] != nil {
		t.Fatalf("turns: %v", turns)
	}
	r := jsonOf[map[string]any](t, h.b.ok("restore", h.cwd, "@1", "--safe", "--json").out)
	if r["safe"] != true {
		t.Errorf("restore --safe: %v", r)
	}
	want := map[string]string{"nb.ipynb": "{}\n", "mine.txt": "mine, edited\n"}
	if got := readFiles(t, h.cwd); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after restore --safe:\n%v\nwant\n%v", got, want)
	}
}

// TestHookScratchFileOutsideProjects: a Write to a file in no project (a
// scratch file in another directory, a ../ path) snapshots the session's
// project, never the file's directory, and leaves a line in the hook log;
// a Write into a directory with a root marker snapshots that project too.
func TestHookScratchFileOutsideProjects(t *testing.T) {
	b := newBinEnv(t)
	base := filepath.Join(b.home, "work") // below HOME: no marker above it counts
	h := &hookSession{t: t, b: b, cwd: filepath.Join(base, "parent", "proj"), session: "s1"}
	scratch, other := filepath.Join(base, "scratch"), filepath.Join(base, "other")
	writeFiles(t, h.cwd, map[string]string{"a.txt": "a\n"})
	writeFiles(t, scratch, map[string]string{"data.bin": "a large download\n"})
	writeFiles(t, other, map[string]string{"Cargo.toml": "[package]\n", "b.rs": "fn main() {}\n"})
	for file, path := range map[string]string{filepath.Join(scratch, "scratch.py"): "", "../notes.py": filepath.Join(base, "parent", "notes.py")} {
		h.event("pre_tool_use_write", map[string]string{"file": file, "content": "x = 1"})
		must(t, os.WriteFile(cmp.Or(path, file), []byte("x = 1\n"), 0o644))
		h.event("post_tool_use_write", map[string]string{"file": file, "content": "x = 1"})
	}
	h.event("pre_tool_use_write", map[string]string{"file": filepath.Join(other, "b.rs"), "content": "fn main() { }"})
	if n := len(listing(t, h.b, h.cwd)); n != 1 {
		t.Errorf("the session's project has %d snapshots, want 1", n)
	}
	if n := len(listing(t, h.b, other)); n != 1 {
		t.Errorf("the project with a root marker has %d snapshots, want 1", n)
	}
	for _, dir := range []string{scratch, filepath.Join(base, "parent")} {
		if ids := listing(t, h.b, dir); len(ids) != 0 {
			t.Errorf("%s, in no project, was snapshotted: %v", dir, ids)
		}
	}
	log := strings.Join(h.hookLog(), "\n")
	for _, path := range []string{filepath.Join(scratch, "scratch.py"), filepath.Join(base, "parent", "notes.py")} {
		if !strings.Contains(log, " PreToolUse Write of "+path+": in no project (no root marker, not a known project): not snapshotted") {
			t.Errorf("hook log names no scratch write to %s:\n%s", path, log)
		}
	}
	if n := len(h.hookLog()); n != 2 {
		t.Errorf("hook log of %d lines, want 2:\n%s", n, log)
	}
}
