package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/casckpt/casckpt/jsonapi"
)

// logName is the hook log's file name in the hook's directory; past
// logMax bytes it is moved aside to logName.1.
const (
	logName = "hook.log"
	logMax  = 1 << 20
)

// toldName is the file, beside the hook log, that names the sessions
// already told of a failing checkpoint (the newest toldMax).
const (
	toldName = "hook.told"
	toldMax  = 200
)

// Log appends one line (time, event, error) to the hook log in h.Dir;
// when it cannot, the line goes to h.Unlogged. A log past 1 MiB is first
// moved to hook.log.1 (replacing the one before).
func (h Hook) Log(event string, err error) {
	line := fmt.Sprintf("%s %s %s\n", h.Now().UTC().Format(time.RFC3339), event, strings.ReplaceAll(err.Error(), "\n", " "))
	if appendLog(h.Dir, line) != nil && h.Unlogged != nil {
		h.Unlogged(line)
	}
}

// appendLog appends line to the log in dir, made when missing.
func appendLog(dir, line string) error {
	if dir == "" {
		return errors.New("no directory for the hook log")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	name := filepath.Join(dir, logName)
	if st, err := os.Stat(name); err == nil && st.Size() > logMax {
		_ = os.Rename(name, name+".1") // on failure, the log grows on
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	return errors.Join(err, f.Close())
}

// tell tells the user that the prompt got no checkpoint, once per
// session: it prints the jsonapi.HookMessage whose systemMessage Claude Code shows.
// When the note of sessions told cannot be kept (or the event names no
// session), it tells every time.
func (h Hook) tell(session string, err error) {
	if h.Dir != "" && session != "" {
		name := filepath.Join(h.Dir, toldName)
		data, _ := os.ReadFile(name)
		told := strings.Split(strings.TrimSpace(string(data)), "\n")
		if slices.Contains(told, session) {
			return
		}
		told = append(told, session)
		if len(told) > toldMax {
			told = told[len(told)-toldMax:]
		}
		if os.MkdirAll(h.Dir, 0o700) == nil {
			_ = os.WriteFile(name, []byte(strings.TrimSpace(strings.Join(told, "\n"))+"\n"), 0o600) // unkept: told again
		}
	}
	msg := oneLine(err.Error())
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "..."
	}
	enc := json.NewEncoder(h.Out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(jsonapi.HookMessage{SystemMessage: "casckpt: no checkpoint of this prompt: " + msg +
		" (casckpt status shows the hook's recent misses; said once per session)"})
}

// RecentMisses returns the lines of the hook log in dir from the day
// before now, at most the newest n: what casckpt status shows. It is
// empty, never nil, when there is no log.
func RecentMisses(dir string, now time.Time, n int) []string {
	out := []string{}
	if dir == "" {
		return out
	}
	data, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		return out
	}
	since := now.Add(-24 * time.Hour)
	for line := range strings.Lines(string(data)) {
		stamp, _, _ := strings.Cut(line, " ")
		if t, err := time.Parse(time.RFC3339, stamp); err == nil && !t.Before(since) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out[max(0, len(out)-n):]
}
