package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/casckpt/casckpt/migrate/gitimport/gittest"
	"golang.org/x/sys/unix"
)

// TestGeminiCLIEndToEnd makes Gemini CLI's checkpoints with the real CLI
// (0.61.0, from testdata/gemini-e2e's lockfile; .ci/test installs it):
// interactive, in a pseudo-terminal, with checkpointing on, against a
// scripted Gemini API server on 127.0.0.1 whose answers call write_file,
// replace and write_file again. The CLI snapshots the project into
// ~/.gemini/history/<slug> as each edit waits for approval; the test
// approves each (Enter) once its checkpoint file is written. Then, with no
// git on PATH, `migrate --from-agent gemini --path ~/.gemini` imports
// every changed commit with git's bytes, labelled gemini:<slug> and a turn
// of its own, its checkpoint file's time in milliseconds (the model
// answers at once, so commits share git's whole seconds); a second run
// imports nothing; the .gemini directory is unchanged; `undo` of the last
// turn reverts only it and `restore --safe` works on the imported history.
func TestGeminiCLIEndToEnd(t *testing.T) {
	bundle, err := filepath.Abs(filepath.Join("testdata", "gemini-e2e", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js"))
	must(t, err)
	if _, err := os.Stat(bundle); err != nil {
		t.Skip("Gemini CLI is not installed: run npm ci in cmd/casckpt/testdata/gemini-e2e")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	git, err := exec.LookPath("git") // the CLI's checkpoints need it
	if err != nil {
		t.Skip("the git program is needed by Gemini CLI's checkpointing")
	}
	home := t.TempDir()
	proj, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	proj = filepath.Join(proj, "My App") // slug my-app
	writeFiles(t, proj, map[string]string{"notes.txt": "alpha\nbeta\n", "keep.txt": "untouched\n"})
	file := func(name string) string { return filepath.Join(proj, name) }
	prompt := scriptedPrompt{"step one: edit the project", []scriptedCall{
		{"write_file", map[string]any{"file_path": file("new.txt"), "content": "written by gemini\n"}},
		{"replace", map[string]any{"file_path": file("notes.txt"), "old_string": "beta", "new_string": "BETA", "instruction": "capitalise beta"}},
		{"write_file", map[string]any{"file_path": file("new.txt"), "content": "rewritten\n"}},
	}}
	model := &geminiModel{prompt: prompt}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	gemini := filepath.Join(home, ".gemini")
	writeFiles(t, gemini, map[string]string{"settings.json": `{"general": {"checkpointing": {"enabled": true}, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
 "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
 "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}
`})
	env := []string{"PATH=" + filepath.Dir(node) + ":" + filepath.Dir(git) + ":/usr/bin:/bin", "HOME=" + home, "TERM=xterm-256color",
		"GEMINI_API_KEY=scripted", "GOOGLE_GEMINI_BASE_URL=" + srv.URL,
		"GEMINI_CLI_NO_RELAUNCH=true"} // one process: no child relaunched with more heap

	runGeminiCLI(t, exec.Command(node, bundle, "-i", prompt.prompt), proj, env,
		filepath.Join(gemini, "tmp", "my-app", "checkpoints"), len(prompt.calls), func() bool { return model.done() })
	if errs := model.failures(); len(errs) > 0 {
		t.Fatalf("the scripted model saw: %q", errs)
	}
	checkTree(t, proj, map[string]string{"notes.txt": "alpha\nBETA\n", "keep.txt": "untouched\n", "new.txt": "rewritten\n"})
	checkGeminiImport(t, gemini, proj)
}

// checkGeminiImport checks what TestGeminiCLIEndToEnd says of the import
// of the CLI's .gemini directory gemini, whose project is proj.
func checkGeminiImport(t *testing.T, gemini, proj string) {
	commits := gittest.NewGit(t).Log(filepath.Join(gemini, "history", "my-app", ".git"))
	var subjects []string
	for _, c := range commits {
		subjects = append(subjects, c.Subject)
	}
	if want := []string{"Initial commit", "Snapshot for write_file", "Snapshot for replace", "Snapshot for write_file"}; !slices.Equal(subjects, want) {
		t.Fatalf("the CLI's commits: %q, want %q", subjects, want)
	}
	checkpointFiles := checkGeminiLayout(t, gemini, proj, commits)
	before := gittest.DirDigest(t, gemini)
	b := newBinEnv(t) // no git on its PATH
	m := jsonOf[map[string]any](t, b.ok("migrate", "--from-agent", "gemini", "--path", gemini, "--json").out)
	if m["agent"] != "gemini" || m["snapshots_imported"] != 4.0 || m["projects"] != 1.0 || len(m["errors"].([]any)) != 0 {
		t.Fatalf("migrate: %v", m)
	}
	list := jsonOf[[]map[string]any](t, b.ok("list", proj, "--json").out)
	if len(list) != len(commits) {
		t.Fatalf("list: %v", list)
	}
	for i, c := range commits { // list is newest first
		snap := list[len(list)-1-i]
		want := map[string]string{}
		for name, f := range c.Files {
			want[name] = f.Kind + ":" + f.Data
		}
		var session any = "gemini:my-app"
		if i == 0 {
			session = nil // the Initial commit has no label
		}
		if snap["reason"] != "imported from gemini: "+c.Subject || snap["session"] != session || (session != nil && snap["turn"] == nil) {
			t.Errorf("snapshot of commit %d: %v", i, snap)
		}
		if turn, _ := snap["turn"].(string); session != nil && !strings.HasPrefix(checkpointFiles[c.Hash], isoTurn(t, turn)) {
			t.Errorf("snapshot of commit %d: turn %s, its checkpoint file %s", i, turn, checkpointFiles[c.Hash])
		}
		if got := snapshotFiles(t, b, proj, snap["id"].(string)); !maps.Equal(got, want) {
			t.Errorf("snapshot of commit %d holds %q, git %q", i, got, want)
		}
	}
	if turns := map[any]bool{list[0]["turn"]: true, list[1]["turn"]: true, list[2]["turn"]: true}; len(turns) != 3 {
		t.Errorf("the three checkpoints share turns: %v", turns) // the CLI commits them within a second or two
	}
	again := jsonOf[map[string]any](t, b.ok("migrate", "--from-agent", "gemini", "--path", gemini, "--json").out)
	if again["snapshots_imported"] != 0.0 || again["snapshots_skipped"] != 4.0 {
		t.Fatalf("second migrate: %v", again)
	}
	if gittest.DirDigest(t, gemini) != before {
		t.Fatal("migrate changed the .gemini directory")
	}
	b.ok("undo", proj, list[0]["turn"].(string)) // the replace of notes.txt
	checkTree(t, proj, map[string]string{"notes.txt": "alpha\nbeta\n", "keep.txt": "untouched\n", "new.txt": "rewritten\n"})
	b.ok("restore", proj, "@1", "--safe") // @1: the pre-undo snapshot, the CLI's last state
	checkTree(t, proj, map[string]string{"notes.txt": "alpha\nBETA\n", "keep.txt": "untouched\n", "new.txt": "rewritten\n"})
}

// isoTurn is turn, Unix milliseconds, as Gemini CLI starts the name of a
// checkpoint file of that time: its ISO time, ":" as "-" and "." as "_".
func isoTurn(t *testing.T, turn string) string {
	t.Helper()
	ms, err := strconv.ParseInt(turn, 10, 64)
	must(t, err)
	return strings.NewReplacer(":", "-", ".", "_").Replace(time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")) + "-"
}

// checkGeminiLayout checks the layout migrate/gemini reads, as the CLI
// wrote it: projects.json names proj by its slug, my-app, whose
// history/my-app/.project_root is proj, and each checkpoint file of
// tmp/my-app/checkpoints names one of the snapshot commits, each once. It
// returns each commit's checkpoint file name.
func checkGeminiLayout(t *testing.T, gemini, proj string, commits []gittest.Commit) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gemini, "projects.json"))
	must(t, err)
	if got := jsonOf[map[string]map[string]string](t, string(b)); !maps.Equal(got["projects"], map[string]string{proj: "my-app"}) {
		t.Errorf("projects.json: %s", b)
	}
	if b, err := os.ReadFile(filepath.Join(gemini, "history", "my-app", ".project_root")); err != nil || string(b) != proj {
		t.Errorf(".project_root: %q %v", b, err)
	}
	files, err := filepath.Glob(filepath.Join(gemini, "tmp", "my-app", "checkpoints", "*.json"))
	must(t, err)
	var got, want []string
	names := map[string]string{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		must(t, err)
		hash := jsonOf[map[string]any](t, string(b))["commitHash"].(string)
		got, names[hash] = append(got, hash), filepath.Base(name)
	}
	for _, c := range commits[1:] {
		want = append(want, c.Hash)
	}
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("the checkpoint files name %q, the commits are %q", got, want)
	}
	return names
}

// snapshotFiles is what `ls` and `cat` show of snapshot id of proj: each
// file's type and bytes.
func snapshotFiles(t *testing.T, b *binEnv, proj, id string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, e := range jsonOf[[]map[string]any](t, b.ok("ls", proj, id, "--json").out) {
		if e["type"] == "dir" {
			continue
		}
		kind := map[any]string{"file": "file", "symlink": "symlink"}[e["type"]]
		got[e["path"].(string)] = kind + ":" + b.ok("cat", proj, id, e["path"].(string)).out
	}
	return got
}

// runGeminiCLI runs cmd, Gemini CLI in interactive mode, in dir with env,
// on a pseudo-terminal, and approves (Enter) each of the calls edits once
// its checkpoint file is in checkpoints and its dialog is up; it ends the
// CLI once done says the script was played. Anything else after a minute fails the
// test with the screen's tail.
func runGeminiCLI(t *testing.T, cmd *exec.Cmd, dir string, env []string, checkpoints string, calls int, done func() bool) {
	t.Helper()
	ptm, pts := openPTY(t)
	must(t, unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}))
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	must(t, cmd.Start())
	pts.Close()
	var screen lockedBuffer
	go screen.drain(ptm)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptm.Close()
	}()
	// Generous: the CLI starts in a few seconds, each answer in milliseconds.
	deadline := time.Now().Add(time.Minute)
	approved, seen := 0, 0 // edits approved; the screen's length at the last approval
	for !done() || approved < calls {
		if time.Now().After(deadline) {
			t.Fatalf("Gemini CLI: %d of %d edits approved, script done %v; the screen ends:\n%s", approved, calls, done(), screen.tail(3000))
		}
		// Its checkpoint written, the edit's "Apply this change?" dialog up
		// (the window title says so), Enter picks "1. Allow once".
		if entries, _ := os.ReadDir(checkpoints); len(entries) > approved && screen.shows("Action Required", seen) {
			_, err := ptm.Write([]byte("\r"))
			must(t, err)
			approved, seen = approved+1, screen.len()
		}
		time.Sleep(20 * time.Millisecond) // a poll, not a wait for time to pass
	}
}

// lockedBuffer is what a terminal showed, safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// drain copies r into the buffer until r ends.
func (l *lockedBuffer) drain(r *os.File) {
	b := make([]byte, 32<<10)
	for {
		n, err := r.Read(b)
		l.mu.Lock()
		l.buf.Write(b[:n])
		l.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// shows says whether the buffer holds text after its first from bytes.
func (l *lockedBuffer) shows(text string, from int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Contains(l.buf.Bytes()[from:], []byte(text))
}

// len is the buffer's length.
func (l *lockedBuffer) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Len()
}

// tail is the last n bytes of the buffer.
func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf.Bytes()
	return string(b[max(0, len(b)-n):])
}

// geminiModel is a Gemini API server (POST
// /v1beta/models/<model>:streamGenerateContent?alt=sse and
// :generateContent) that plays a script of one prompt. It is stateless:
// the answer to a request with tools is the next call of the prompt after
// as many function responses as follow the prompt's text, then a text;
// the CLI's model router (a JSON-schema request) gets a low complexity
// score; any other request a short text.
type geminiModel struct {
	prompt scriptedPrompt

	mu       sync.Mutex
	finished bool
	errors   map[string]bool
}

// done says whether the model has answered the script's last call's
// response with its closing text.
func (m *geminiModel) done() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.finished
}

// failures are the failed function responses and the requests the script
// had no answer for.
func (m *geminiModel) failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.errors))
}

// geminiRequest is the part of a generateContent request the model reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools            []json.RawMessage `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

// ServeHTTP answers generateContent and streamGenerateContent from the
// script, anything else with 404.
func (m *geminiModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req geminiRequest
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, "generateContent") && !strings.Contains(r.URL.Path, "GenerateContent") {
		http.NotFound(w, r)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{m.answer(req)}},
		"finishReason": "STOP", "index": 0}}, "usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
	if r.URL.Query().Get("alt") != "sse" {
		serveJSON(w, resp)
		return
	}
	line, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", line)
}

// answer is the part that answers req.
func (m *geminiModel) answer(req geminiRequest) map[string]any {
	if req.GenerationConfig.ResponseMimeType == "application/json" { // the model router
		return map[string]any{"text": `{"complexity_reasoning": "scripted", "complexity_score": 10}`}
	}
	results, found := 0, false
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			switch {
			case c.Role == "user" && strings.Contains(p.Text, m.prompt.prompt):
				results, found = 0, true
			case p.FunctionResponse != nil:
				results++
				if _, failed := p.FunctionResponse.Response["error"]; failed {
					m.fail("%s failed: %v", p.FunctionResponse.Name, p.FunctionResponse.Response)
				}
			}
		}
	}
	switch {
	case len(req.Tools) == 0 || !found:
		return map[string]any{"text": "Scripted side answer"}
	case results < len(m.prompt.calls):
		c := m.prompt.calls[results]
		return map[string]any{"functionCall": map[string]any{"name": c.name, "args": c.input}}
	}
	m.mu.Lock()
	m.finished = true
	m.mu.Unlock()
	return map[string]any{"text": "Done: " + m.prompt.prompt}
}

// fail notes a failure for failures.
func (m *geminiModel) fail(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.errors == nil {
		m.errors = map[string]bool{}
	}
	m.errors[fmt.Sprintf(format, args...)] = true
}
