package claudecode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testCommand = "'/opt/casckpt bin/casckpt' hook claude-code --keep-turns 50 --keep-days 7"

// TestInstallKeepsOtherSettings: Install into a settings file with other
// settings and another tool's hook adds casckpt's entry to each of the six
// events after the other hook, keeps the rest in its order and mode, and a
// second Install changes nothing.
func TestInstallKeepsOtherSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude", "settings.json")
	before := `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}, "z": 1}`
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Install(path, testCommand)
	if err != nil {
		t.Fatal(err)
	}
	if c.Removed != 0 || c.Unchanged || len(c.Added) != 6 || c.Added[0] != "UserPromptSubmit" {
		t.Fatalf("Install: %+v", c)
	}
	data := readFile(t, path)
	if i, j, k := bytes.Index(data, []byte(`"model"`)), bytes.Index(data, []byte(`"hooks"`)), bytes.Index(data, []byte(`"z"`)); !(i < j && j < k) {
		t.Fatalf("keys reordered:\n%s", data)
	}
	var got struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if stop := got.Hooks["Stop"]; len(stop) != 2 || stop[0].Hooks[0].Command != "notify-send done" || stop[1].Hooks[0].Command != testCommand {
		t.Fatalf("Stop hooks: %+v", stop)
	}
	if pre := got.Hooks["PreToolUse"]; len(pre) != 1 || pre[0].Matcher != "Write|Edit|MultiEdit|NotebookEdit|Bash" {
		t.Fatalf("PreToolUse hooks: %+v", pre)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", st.Mode(), err)
	}
	if c, err := Install(path, testCommand); err != nil || !c.Unchanged || c.Removed != 6 {
		t.Fatalf("second Install: %+v %v", c, err)
	}
}

// TestUninstallLeavesOnlyOthers: Uninstall takes out every casckpt hook,
// drops the events it leaves empty, and keeps another tool's hook; a
// second Uninstall finds nothing, and one of a missing file says so.
func TestUninstallLeavesOnlyOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	other := `{"hooks": [{"type": "command", "command": "notify-send done"}]}`
	if err := os.WriteFile(path, []byte(`{"hooks": {"Stop": [`+other+`]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(path, testCommand); err != nil {
		t.Fatal(err)
	}
	c, err := Uninstall(path)
	if err != nil || c.Removed != 6 || c.Unchanged {
		t.Fatalf("Uninstall: %+v %v", c, err)
	}
	want := "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if got := string(readFile(t, path)); got != want {
		t.Fatalf("after Uninstall:\n%s\nwant:\n%s", got, want)
	}
	if c, err := Uninstall(path); err != nil || c.Removed != 0 || !c.Unchanged {
		t.Fatalf("second Uninstall: %+v %v", c, err)
	}
	if c, err := Uninstall(filepath.Join(t.TempDir(), "none.json")); err != nil || !c.Missing {
		t.Fatalf("Uninstall of a missing file: %+v %v", c, err)
	}
}

// TestInstallRefusesMalformed: a settings file that is not a JSON object,
// or whose hooks are not lists, is refused and left as it is.
func TestInstallRefusesMalformed(t *testing.T) {
	for _, content := range []string{`[1, 2]`, `{"hooks": 3}`, `{"hooks": {"Stop": {"x": 1}}}`} {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Install(path, testCommand)
		if err == nil || !strings.Contains(err.Error(), "fix it first; it was left as it is") {
			t.Errorf("Install into %s: %v", content, err)
		}
		if got := string(readFile(t, path)); got != content {
			t.Errorf("%s changed to %s", content, got)
		}
	}
}

// TestIsOurHook tells casckpt's hook from others by its program and
// arguments.
func TestIsOurHook(t *testing.T) {
	for command, want := range map[string]bool{
		testCommand: true,
		"/usr/local/bin/casckpt hook claude-code":     true,
		"casckpt-dev hook claude-code --store /tmp/s": true,
		"/usr/bin/other hook claude-code":             false,
		"casckpt snapshot .":                          false,
		"'/opt/x y/other' hook claude-code":           false,
	} {
		if got := isOurHook(command); got != want {
			t.Errorf("isOurHook(%q) = %v, want %v", command, got, want)
		}
	}
}

// TestWriteSettings prints a hooks block of the six events, each running
// the command, with no HTML escaping of its characters; the SessionEnd
// hook, which Claude Code cuts off early by default, has a timeout of
// SessionEndTimeout seconds, the others Claude Code's default.
func TestWriteSettings(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSettings(&b, "casckpt hook claude-code --store '<a&b>'"); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Hooks map[string][]struct{ Hooks []map[string]any }
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Hooks) != 6 || !strings.Contains(b.String(), "'<a&b>'") || !strings.HasPrefix(b.String(), "{\n  \"hooks\"") {
		t.Fatalf("settings:\n%s", b.String())
	}
	for event, entries := range got.Hooks {
		timeout, want := entries[0].Hooks[0]["timeout"], any(nil)
		if event == "SessionEnd" {
			want = float64(SessionEndTimeout)
		}
		if timeout != want {
			t.Errorf("%s: timeout %v, want %v", event, timeout, want)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
