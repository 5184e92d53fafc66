package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/jsonapi"
)

// SessionEndTimeout is the time, in seconds, the hook's SessionEnd entry
// gives it: Claude Code lets a SessionEnd hook run only briefly by default
// (2.1.197 and 2.1.332 cancel one taking 3 s: "Hook cancelled"), too short to
// wait for a busy store and end an interrupted prompt's turn in a large
// project; the entry's timeout raises that budget.
const SessionEndTimeout = 30

// matchers are the events the hook is installed for, with their tool
// matchers ("": none) and timeouts (0: Claude Code's default).
var matchers = []struct {
	event, matcher string
	timeout        int
}{
	{"UserPromptSubmit", "", 0},
	{"PreToolUse", "Write|Edit|MultiEdit|NotebookEdit|Bash", 0},
	{"PostToolUse", "Write|Edit|MultiEdit|NotebookEdit", 0},
	{"Stop", "", 0},
	{"SessionStart", "", 0},
	{"SessionEnd", "", SessionEndTimeout},
}

// entry is one event's entry of the hooks block.
func entry(command, matcher string, timeout int) jsonapi.HookEntry {
	return jsonapi.HookEntry{Hooks: []jsonapi.HookCommand{{Type: "command", Command: command, Timeout: timeout}}, Matcher: matcher}
}

// WriteSettings writes, indented, the hooks block for
// .claude/settings.json that runs command (a shell command line that runs
// `casckpt ... hook claude-code`) on every event the hook acts on.
func WriteSettings(w io.Writer, command string) error {
	hooks := map[string][]jsonapi.HookEntry{}
	for _, m := range matchers {
		hooks[m.event] = []jsonapi.HookEntry{entry(command, m.matcher, m.timeout)}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonapi.HookSettings{Hooks: hooks})
}

// Change is what Install or Uninstall did to a settings file.
type Change struct {
	// Path is the settings file.
	Path string
	// Missing says that the file to uninstall from does not exist.
	Missing bool
	// Unchanged says that the file already was as it should be.
	Unchanged bool
	// Added are the events Install added the hook to (in the hooks
	// block's order); Removed is how many events held it before.
	Added   []string
	Removed int
}

// Install merges the hooks block that runs command into the settings file
// at path (made when missing), replacing any casckpt hook already there
// and keeping everything else as it is, in its order.
func Install(path, command string) (Change, error) {
	return change(path, command, true)
}

// Uninstall takes every command hook that runs casckpt's Claude Code hook
// out of the settings file at path, keeping everything else as it is.
func Uninstall(path string) (Change, error) {
	return change(path, "", false)
}

// change takes the hook out of the settings file at path and, when
// install, puts the one running command in.
func change(path, command string, install bool) (Change, error) {
	c := Change{Path: path}
	settings, hooks, old, err := readSettings(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !install:
		c.Missing = true
		return c, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return c, err
	}
	if c.Removed, err = removeOurHooks(&hooks); err != nil {
		return c, fmt.Errorf("%s: %w: fix it first; it was left as it is", path, err)
	}
	if install {
		if c.Added, err = addOurHooks(&hooks, command, path); err != nil {
			return c, err
		}
	}
	data, err := encodeSettings(settings, hooks)
	if err != nil {
		return c, err
	}
	if bytes.Equal(data, old) {
		c.Unchanged = true
		return c, nil
	}
	return c, writeFileAtomic(path, data)
}

// readSettings reads the settings file at path and its hooks object; for
// a missing file it returns empty objects and an error that is
// os.ErrNotExist.
func readSettings(path string) (settings, hooks jsonObject, data []byte, err error) {
	data, err = os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &settings); err != nil {
			return nil, nil, nil, fmt.Errorf("%s is not a JSON object (%v): fix it first; it was left as it is", path, err)
		}
	}
	if raw := settings.get("hooks"); raw != nil {
		if err := json.Unmarshal(raw, &hooks); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: \"hooks\" is not a JSON object (%v): fix it first; it was left as it is", path, err)
		}
	}
	return settings, hooks, data, nil
}

// addOurHooks appends the entry running command to each event's list of
// hooks, and returns the events; path names the file in an error.
func addOurHooks(hooks *jsonObject, command, path string) ([]string, error) {
	var added []string
	for _, m := range matchers {
		var entries []json.RawMessage
		if raw := hooks.get(m.event); raw != nil {
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, fmt.Errorf("%s: hooks.%s is not a list: fix it first; it was left as it is", path, m.event)
			}
		}
		e, err := json.Marshal(entry(command, m.matcher, m.timeout))
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(append(entries, e))
		if err != nil {
			return nil, err
		}
		hooks.set(m.event, raw)
		added = append(added, m.event)
	}
	return added, nil
}

// encodeSettings is settings, with hooks as its hooks (none when empty),
// indented as a person's settings file is.
func encodeSettings(settings, hooks jsonObject) ([]byte, error) {
	if len(hooks) == 0 {
		settings.set("hooks", nil)
	} else {
		raw, err := json.Marshal(hooks)
		if err != nil {
			return nil, err
		}
		settings.set("hooks", raw)
	}
	out, err := json.Marshal(settings)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	return pretty.Bytes(), nil
}

// isOurHook reports whether a hook's command line runs this hook: its
// program is this binary or named casckpt*, with hook claude-code.
func isOurHook(command string) bool {
	first, _, _ := strings.Cut(command, " ")
	if rest, ok := strings.CutPrefix(command, "'"); ok { // quoted for a POSIX shell
		first, _, _ = strings.Cut(rest, "'")
	}
	self, _ := os.Executable()
	return strings.Contains(command, " hook claude-code") && (first == self || strings.HasPrefix(filepath.Base(first), "casckpt"))
}

// removeOurHooks takes every command hook that runs this hook out of
// hooks, dropping the entries and events left empty, and returns how many
// events held it. Everything else is kept as it is.
func removeOurHooks(hooks *jsonObject) (int, error) {
	removed := 0
	for _, event := range slices.Clone(*hooks) {
		var entries []json.RawMessage
		if json.Unmarshal(event.value, &entries) != nil {
			continue // not a list: not ours to touch
		}
		kept, hit, err := removeFromEntries(entries)
		if err != nil {
			return 0, err
		}
		if !hit {
			continue
		}
		removed++
		if len(kept) == 0 {
			hooks.set(event.key, nil)
			continue
		}
		list, err := json.Marshal(kept)
		if err != nil {
			return 0, err
		}
		hooks.set(event.key, list)
	}
	return removed, nil
}

// removeFromEntries takes this hook out of one event's entries, dropping
// an entry left empty, and says whether any held it.
func removeFromEntries(entries []json.RawMessage) (kept []json.RawMessage, hit bool, err error) {
	kept = []json.RawMessage{}
	for _, raw := range entries {
		var e jsonObject
		var cmds []json.RawMessage
		if json.Unmarshal(raw, &e) != nil || json.Unmarshal(e.get("hooks"), &cmds) != nil {
			kept = append(kept, raw)
			continue
		}
		others := []json.RawMessage{}
		for _, c := range cmds {
			var h struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(c, &h) == nil && isOurHook(h.Command) {
				continue
			}
			others = append(others, c)
		}
		switch {
		case len(others) == len(cmds):
			kept = append(kept, raw)
			continue
		case len(others) == 0:
			hit = true
			continue
		}
		hit = true
		list, err := json.Marshal(others)
		if err != nil {
			return nil, false, err
		}
		e.set("hooks", list)
		if raw, err = json.Marshal(e); err != nil {
			return nil, false, err
		}
		kept = append(kept, raw)
	}
	return kept, hit, nil
}

// writeFileAtomic replaces path with data through a temporary file in its
// directory (made when missing), keeping the old file's mode.
func writeFileAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	err = errors.Join(err, tmp.Chmod(mode), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
