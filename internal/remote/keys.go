package remote

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/casckpt/casckpt/cas"
)

// Folders under the store's prefix.
const (
	CommitsDir = "commits/"
	DroppedDir = "dropped/"
	PinsDir    = "pins/"
)

// timeDigits is the width of a key's time.
const timeDigits = 20

func keyTime(t time.Time) string {
	return fmt.Sprintf("%0*d", timeDigits, max(t.UnixNano(), 0))
}

// CommitKey is the key of a commit made at t whose first record is id.
func CommitKey(t time.Time, id cas.ID) string { return CommitsDir + keyTime(t) + "-" + id.String() }

// DroppedKey is the key of the marker that drops snapshot id at t.
func DroppedKey(t time.Time, id cas.ID) string { return DroppedDir + keyTime(t) + "-" + id.String() }

// PinKey is the key of the marker that pins snapshot id.
func PinKey(id cas.ID) string { return PinsDir + id.String() }

// StartAfter is the key after which a listing of folder dir starts to see
// every key of time t or later.
func StartAfter(dir string, t time.Time) string {
	if t.UnixNano() <= 0 {
		return ""
	}
	return dir + keyTime(t.Add(-time.Nanosecond)) + "~"
}

// ParseTimed splits a commit or dropped key of folder dir into its time
// and ID.
func ParseTimed(dir, key string) (time.Time, cas.ID, bool) {
	rest, ok := strings.CutPrefix(key, dir)
	ts, idHex, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(ts) != timeDigits || strings.Trim(ts, "0123456789") != "" {
		return time.Time{}, cas.ID{}, false
	}
	ns, err := strconv.ParseInt(ts, 10, 64)
	id, ok := parseID(idHex)
	if err != nil || !ok {
		return time.Time{}, cas.ID{}, false
	}
	return time.Unix(0, ns), id, true
}

// ParsePin returns the snapshot ID of a pin key.
func ParsePin(key string) (cas.ID, bool) {
	rest, ok := strings.CutPrefix(key, PinsDir)
	if !ok {
		return cas.ID{}, false
	}
	return parseID(rest)
}

func parseID(s string) (cas.ID, bool) {
	var id cas.ID
	if len(s) != 2*cas.IDSize {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil || hex.EncodeToString(id[:]) != s {
		return id, false
	}
	return id, true
}
