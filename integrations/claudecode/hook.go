package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/casckpt/casckpt"
)

// Wait is how long a hook waits for a busy store, and for a silent
// server of a bucket store (each request's silence, its tries included),
// before it logs the miss rather than hold up the agent: the caller opens
// the store with it as casckpt.Options.LockTimeout and S3Timeout.
const Wait = time.Second

// The hook's default retention: the snapshots of the last DefaultKeepTurns
// turns and of the last DefaultKeepDays days, whichever keeps more.
const (
	DefaultKeepTurns = 50
	DefaultKeepDays  = 7
)

// Hook acts on Claude Code hook events for one store.
type Hook struct {
	// Open opens the store; Run calls it only for an event it acts on.
	Open func() (*casckpt.Store, error)
	// Now is the clock of the log's lines and of the prompt IDs it makes.
	Now func() time.Time
	// KeepTurns and KeepDays are the retention of the hook's snapshots
	// (casckpt.SnapshotOptions.KeepTurns and KeepDays).
	KeepTurns, KeepDays int
	// Dir is the directory of the hook's log and notes; "" when there is
	// none, and then every log line goes to Unlogged.
	Dir string
	// Out receives the JSON object whose systemMessage Claude Code shows
	// the user (the hook's stdout).
	Out io.Writer
	// Unlogged, if set, receives a log line the log could not take.
	Unlogged func(line string)
}

// Run reads one event from in and acts on it, logging any failure; a
// failed UserPromptSubmit also tells the user, once per session.
func (h Hook) Run(ctx context.Context, in io.Reader) {
	ev, err := readEvent(in)
	if err != nil {
		h.Log("-", err)
		return
	}
	if err := h.Handle(ctx, ev); err != nil {
		h.Log(oneLine(ev.Name), err)
		if ended := (endError{}); ev.Name == "UserPromptSubmit" && !errors.As(err, &ended) {
			h.tell(ev.SessionID, err)
		}
	}
}

// readEvent reads and decodes one event.
func readEvent(in io.Reader) (Event, error) {
	data, err := io.ReadAll(in)
	if err != nil {
		return Event{}, fmt.Errorf("read the event: %w", err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return Event{}, errors.New("empty stdin: no event to act on")
	}
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return Event{}, fmt.Errorf("malformed event JSON: %w", err)
	}
	return ev, nil
}

// Handle acts on ev; unknown events, and tool events of tools that write
// nothing, are ignored without opening the store.
func (h Hook) Handle(ctx context.Context, ev Event) error {
	switch ev.Name {
	case "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart", "SessionEnd":
	default:
		return nil
	}
	if (ev.Name == "PreToolUse" || ev.Name == "PostToolUse") && !checkpointTools[ev.ToolName] {
		return nil
	}
	if ev.SessionID == "" || ev.Cwd == "" {
		return errors.New("the event has no session_id or cwd: nothing to attribute it to")
	}
	store, err := h.Open()
	if err != nil {
		return err
	}
	r := run{ctx: ctx, store: store, ev: ev, now: h.Now, keepTurns: h.KeepTurns, keepDays: h.KeepDays}
	switch ev.Name {
	case "UserPromptSubmit":
		return r.promptSubmit()
	case "SessionStart", "SessionEnd":
		if ev.Source == "compact" {
			return nil // the context was compacted: the prompt goes on
		}
		turns, err := r.store.SessionTurns(r.ctx, r.ev.SessionID)
		if err != nil {
			return err
		}
		return r.interrupt(turns, "")
	case "PreToolUse":
		return r.preToolUse()
	case "PostToolUse":
		return r.postToolUse()
	}
	return r.stop()
}

// oneLine keeps s on one line of the log.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
