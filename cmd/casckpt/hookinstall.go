package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// jsonObject is a JSON object that keeps its keys in order, so that
// rewriting a person's settings file changes only what it must.
type jsonObject []jsonMember

type jsonMember struct {
	key   string
	value json.RawMessage
}

// UnmarshalJSON reads a JSON object, keeping its members' order.
func (o *jsonObject) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	*o = nil
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, jsonMember{tok.(string), v})
	}
	_, err := dec.Token()
	return err
}

// MarshalJSON writes the object's members in order.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		b = append(append(b, k...), ':')
		b = append(b, m.value...)
	}
	return append(b, '}'), nil
}

// get returns the value of key (nil when absent).
func (o jsonObject) get(key string) json.RawMessage {
	for _, m := range o {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// set sets key to v (appended when new; removed when v is nil).
func (o *jsonObject) set(key string, v json.RawMessage) {
	for i, m := range *o {
		if m.key == key {
			if v == nil {
				*o = slices.Delete(*o, i, i+1)
			} else {
				(*o)[i].value = v
			}
			return
		}
	}
	if v != nil {
		*o = append(*o, jsonMember{key, v})
	}
}

// isOurHook reports whether a hook's command line runs this hook: its
// program is this binary or named casckpt*, with hook claude-code.
func isOurHook(command string) bool {
	first, _, _ := strings.Cut(command, " ")
	if rest, ok := strings.CutPrefix(command, "'"); ok { // as shellQuote quotes it
		first, _, _ = strings.Cut(rest, "'")
	}
	self, _ := os.Executable()
	return strings.Contains(command, " hook claude-code") && (first == self || strings.HasPrefix(filepath.Base(first), "casckpt"))
}

// settingsPath is the settings file --install and --uninstall change:
// ~/.claude/settings.json with --user, else .claude/settings.json of the
// current directory.
func settingsPath(g *globals, user bool) (string, error) {
	if user {
		if g.home() == "" {
			return "", errors.New("--user: HOME is not set")
		}
		return filepath.Join(g.home(), ".claude", "settings.json"), nil
	}
	return filepath.Abs(filepath.Join(".claude", "settings.json"))
}

// installHook merges the hooks block into a settings file (f.install), or
// takes this hook out of it (f.uninstall), keeping everything else, and
// says what changed.
func installHook(cmd *cobra.Command, g *globals, f hookFlags) error {
	path, err := settingsPath(g, f.user)
	if err != nil {
		return err
	}
	var settings jsonObject
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if f.uninstall {
			_, err = fmt.Fprintf(g.io.out, "%s does not exist: nothing to remove\n", path)
			return err
		}
	case err != nil:
		return err
	case len(bytes.TrimSpace(data)) > 0:
		if err := json.Unmarshal(data, &settings); err != nil {
			return fmt.Errorf("%s is not a JSON object (%v): fix it first; it was left as it is", path, err)
		}
	}
	var hooks jsonObject
	if raw := settings.get("hooks"); raw != nil {
		if err := json.Unmarshal(raw, &hooks); err != nil {
			return fmt.Errorf("%s: \"hooks\" is not a JSON object (%v): fix it first; it was left as it is", path, err)
		}
	}
	removed, err := removeOurHooks(&hooks)
	if err != nil {
		return fmt.Errorf("%s: %w: fix it first; it was left as it is", path, err)
	}
	var added []string
	if f.install {
		command := hookCommand(cmd, g)
		for _, m := range hookMatchers {
			var entries []json.RawMessage
			if raw := hooks.get(m.event); raw != nil {
				if err := json.Unmarshal(raw, &entries); err != nil {
					return fmt.Errorf("%s: hooks.%s is not a list: fix it first; it was left as it is", path, m.event)
				}
			}
			e, err := json.Marshal(hookEntry(command, m.matcher))
			if err != nil {
				return err
			}
			raw, err := json.Marshal(append(entries, e))
			if err != nil {
				return err
			}
			hooks.set(m.event, raw)
			added = append(added, m.event)
		}
	}
	if len(hooks) == 0 {
		settings.set("hooks", nil)
	} else {
		raw, err := json.Marshal(hooks)
		if err != nil {
			return err
		}
		settings.set("hooks", raw)
	}
	out, err := json.Marshal(settings)
	var pretty bytes.Buffer
	if err == nil {
		err = json.Indent(&pretty, out, "", "  ")
	}
	if err != nil {
		return err
	}
	pretty.WriteByte('\n')
	if bytes.Equal(pretty.Bytes(), data) {
		_, err := fmt.Fprintf(g.io.out, "%s: already as it should be, unchanged\n", path)
		return err
	}
	if err := writeFileAtomic(path, pretty.Bytes()); err != nil {
		return err
	}
	switch {
	case f.install && removed > 0:
		_, err = fmt.Fprintf(g.io.out, "%s: replaced the casckpt hook (%s)\n", path, strings.Join(added, ", "))
	case f.install:
		_, err = fmt.Fprintf(g.io.out, "%s: added the casckpt hook (%s)\n", path, strings.Join(added, ", "))
	case removed > 0:
		_, err = fmt.Fprintf(g.io.out, "%s: removed the casckpt hook from %s\n", path, countOf(int64(removed), "event"))
	default:
		_, err = fmt.Fprintf(g.io.out, "%s: no casckpt hook in it, unchanged\n", path)
	}
	return err
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
		kept, hit := []json.RawMessage{}, false
		for _, raw := range entries {
			var entry jsonObject
			var cmds []json.RawMessage
			if json.Unmarshal(raw, &entry) != nil || json.Unmarshal(entry.get("hooks"), &cmds) != nil {
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
				return 0, err
			}
			entry.set("hooks", list)
			if raw, err = json.Marshal(entry); err != nil {
				return 0, err
			}
			kept = append(kept, raw)
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
