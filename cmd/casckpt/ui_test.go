package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// uiServer is a running casckpt ui.
type uiServer struct {
	t     *testing.T
	cmd   *exec.Cmd
	URL   string `json:"url"`
	Port  int    `json:"port"`
	Token string `json:"token"`
}

// startUI starts casckpt ui --json --no-open with b's environment and
// reads its ready line; the test's end stops it.
func (b *binEnv) startUI(args ...string) *uiServer {
	b.t.Helper()
	c := b.command(append([]string{"ui", "--json", "--no-open"}, args...)...)
	out, err := c.StdoutPipe()
	if err != nil {
		b.t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		b.t.Fatal(err)
	}
	s := &uiServer{t: b.t, cmd: c}
	b.t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		b.t.Fatalf("ui printed no ready line: %v", err)
	}
	if err := json.Unmarshal(line, s); err != nil {
		b.t.Fatalf("ready line %q: %v", line, err)
	}
	return s
}

// do sends a request to the server (host: the Host header, "" for the
// server's own) and returns the status and body.
func (s *uiServer) do(method, path, body string, header map[string]string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:"+strconv.Itoa(s.Port)+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// auth is the header with the token.
func (s *uiServer) auth() map[string]string {
	return map[string]string{"Authorization": "Bearer " + s.Token}
}

// uiProject is a project with three turns made through the command.
func uiProject(t *testing.T, b *binEnv) string {
	t.Helper()
	dir := t.TempDir()
	for i, content := range []string{"one\n", "one\ntwo\n", "one\ntwo\nthree\n"} {
		turn := "t" + strconv.Itoa(i+1)
		b.ok("snapshot", dir, "--session", "s1", "--turn", turn, "-m", "start "+turn)
		writeFiles(t, dir, map[string]string{"a.txt": content, turn + ".txt": turn + "\n"})
		b.ok("snapshot", dir, "--session", "s1", "--turn", turn, "--end-turn", "-m", "end "+turn)
	}
	return dir
}

// TestUIAnswersAsTheCommands: each GET endpoint answers byte for byte the
// document the command prints with --json; cat answers the raw bytes; a
// dry-run undo changes nothing and a real one does what the command does.
func TestUIAnswersAsTheCommands(t *testing.T) {
	b := newBinEnv(t)
	dir := uiProject(t, b)
	s := b.startUI()
	q := "dir=" + urlEscape(dir)
	for path, args := range map[string][]string{
		"/api/status":                        {"status", "--json"},
		"/api/list?" + q:                     {"list", "--json", dir},
		"/api/list?n=2&" + q:                 {"list", "--json", "-n", "2", dir},
		"/api/turns?" + q:                    {"turns", "--json", dir},
		"/api/diff?from=%231&to=%233&" + q:   {"diff", "--json", "--patch", dir, "#1", "#3"},
		"/api/log?path=a.txt&" + q:           {"log", "--json", dir, "a.txt"},
		"/api/cat?snap=%233&path=a.txt&" + q: {"cat", dir, "#3", "a.txt"},
	} {
		code, body := s.do("GET", path, "", s.auth())
		if want := b.ok(args...).out; code != 200 || string(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, code, body, want)
		}
	}
	undo := `{"dir":` + strconv.Quote(dir) + `,"turn":"t2","dry_run":true}`
	code, body := s.do("POST", "/api/undo", undo, s.auth())
	if code != 200 || !strings.Contains(string(body), `"dry_run":true`) || readFile(t, filepath.Join(dir, "t2.txt")) != "t2\n" {
		t.Fatalf("dry-run undo: %d %s", code, body)
	}
	code, body = s.do("POST", "/api/undo", strings.Replace(undo, "true", "false", 1), s.auth())
	if _, err := os.Stat(filepath.Join(dir, "t2.txt")); code != 200 || !os.IsNotExist(err) {
		t.Fatalf("undo: %d %s; t2.txt: %v", code, body, err)
	}
	var u struct {
		PreUndoID *string `json:"pre_undo_id"`
	}
	if err := json.Unmarshal(body, &u); err != nil {
		t.Fatal(err)
	}
	before := "#3" // the working tree was the newest snapshot: undo took none
	if u.PreUndoID != nil {
		before = *u.PreUndoID
	}
	code, body = s.do("POST", "/api/restore", `{"dir":`+strconv.Quote(dir)+`,"snap":"`+before+`"}`, s.auth())
	if code != 200 || readFile(t, filepath.Join(dir, "t2.txt")) != "t2\n" {
		t.Fatalf("restore of the pre-undo snapshot: %d %s", code, body)
	}
	code, body = s.do("POST", "/api/pin", `{"dir":`+strconv.Quote(dir)+`,"snap":"#1"}`, s.auth())
	if code != 200 || !strings.Contains(b.ok("list", "--json", dir).out, `"pinned":true`) {
		t.Fatalf("pin: %d %s", code, body)
	}
	code, body = s.do("POST", "/api/restore", `{"dir":`+strconv.Quote(dir)+`,"snap":"#99"}`, s.auth())
	if code != 422 || !strings.Contains(string(body), `"exit":1`) {
		t.Errorf("restore of no snapshot: %d %s, want 422 with exit 1", code, body)
	}
}

// urlEscape is s as a query value.
func urlEscape(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23")
	return r.Replace(s)
}

// readFile is path's content ("" when it cannot be read).
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestUIRefusesAndChangesNothing: no token, a wrong one, a foreign Host
// or Origin, a GET on a POST endpoint, a path outside the project and a
// directory that is no project are each refused with their status, and
// neither the project's files nor its list change.
func TestUIRefusesAndChangesNothing(t *testing.T) {
	b := newBinEnv(t)
	dir := uiProject(t, b)
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	writeFiles(t, filepath.Dir(dir), map[string]string{"outside.txt": "keep\n"})
	s := b.startUI()
	before, list := treeBytes(t, dir), b.ok("list", "--json", dir).out
	restore := `{"dir":` + strconv.Quote(dir) + `,"snap":"#1"}`
	own := "127.0.0.1:" + strconv.Itoa(s.Port)
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		want                     int
	}{
		{"no token", "POST", "/api/restore", restore, nil, 401},
		{"wrong token", "POST", "/api/restore", restore, map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 32)}, 401},
		{"token in the API's URL", "POST", "/api/restore?token=" + s.Token, restore, nil, 401},
		{"foreign Host", "POST", "/api/restore", restore, map[string]string{"Authorization": "Bearer " + s.Token, "Host": "evil.example:" + strconv.Itoa(s.Port)}, 403},
		{"foreign Origin", "POST", "/api/restore", restore, map[string]string{"Authorization": "Bearer " + s.Token, "Origin": "http://evil.example"}, 403},
		{"GET that changes state", "GET", "/api/restore?dir=" + urlEscape(dir) + "&snap=%231", "", s.auth(), 405},
		{"GET forget", "GET", "/api/forget", "", s.auth(), 405},
		{"path outside", "POST", "/api/restore", `{"dir":` + strconv.Quote(dir) + `,"snap":"#1","paths":["../outside.txt"]}`, s.auth(), 422},
		{"absolute path outside", "POST", "/api/restore", `{"dir":` + strconv.Quote(dir) + `,"snap":"#1","paths":[` + strconv.Quote(outside) + `]}`, s.auth(), 422},
		{"no project", "POST", "/api/restore", `{"dir":` + strconv.Quote(filepath.Dir(dir)) + `,"snap":"#1"}`, s.auth(), 404},
		{"relative dir", "POST", "/api/restore", `{"dir":".","snap":"#1"}`, s.auth(), 404},
		{"misspelt dry_run", "POST", "/api/restore", `{"dir":` + strconv.Quote(dir) + `,"snap":"#1","dryrun":true}`, s.auth(), 400},
		{"no project to list", "GET", "/api/list?dir=" + urlEscape(filepath.Dir(dir)), "", s.auth(), 404},
	}
	for _, c := range cases {
		code, body := s.do(c.method, c.path, c.body, c.header)
		if code != c.want || !json.Valid(body) {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	if after := treeBytes(t, dir); !bytes.Equal(before, after) {
		t.Errorf("files changed:\n%s\nwant\n%s", after, before)
	}
	if got := b.ok("list", "--json", dir).out; got != list {
		t.Errorf("list changed: %s, want %s", got, list)
	}
	if readFile(t, outside) != "keep\n" {
		t.Error("the file outside the project changed")
	}
	// The page sets the cookie from the URL's token; the cookie then serves the API.
	code, _ := s.do("GET", "/?token="+s.Token, "", map[string]string{"Host": own})
	cookie := map[string]string{"Cookie": "casckpt_token=" + s.Token}
	if c2, body := s.do("GET", "/api/status", "", cookie); code != 200 || c2 != 200 {
		t.Errorf("page %d, status with the cookie %d %s", code, c2, body)
	}
	if code, _ := s.do("GET", "/", "", map[string]string{"Host": "localhost:" + strconv.Itoa(s.Port)}); code != 401 {
		t.Errorf("the page without the token: %d, want 401", code)
	}
}

// treeBytes is every file under dir with its content, in order.
func treeBytes(t *testing.T, dir string) []byte {
	t.Helper()
	var out bytes.Buffer
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out.WriteString(p + "\n" + string(b) + "\n")
		}
		return nil
	})
	return out.Bytes()
}

// TestUIStopsOnSignalsBesideAnother: two ui servers on the same store
// answer side by side (no lock held while idle), and SIGTERM and SIGINT
// each stop one with exit 0.
func TestUIStopsOnSignalsBesideAnother(t *testing.T) {
	b := newBinEnv(t)
	dir := uiProject(t, b)
	first, second := b.startUI(), b.startUI(dir)
	if !strings.Contains(second.URL, "&dir=") {
		t.Errorf("URL with DIR: %s", second.URL)
	}
	writeFiles(t, dir, map[string]string{"beside.txt": "x\n"})
	b.ok("snapshot", dir, "-m", "beside two servers")
	for i, s := range []*uiServer{first, second} {
		if code, body := s.do("GET", "/api/list?dir="+urlEscape(dir), "", s.auth()); code != 200 || !strings.Contains(string(body), "beside two servers") {
			t.Fatalf("server %d: %d %s", i, code, body)
		}
	}
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		s := []*uiServer{first, second}[i]
		s.cmd.Process.Signal(sig)
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("%v: %v, want exit 0", sig, err)
		}
	}
}
