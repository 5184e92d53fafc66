package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/casckpt/casckpt"
)

// humanBytes formats a size with a binary unit: 512 B, 12.3 KiB, 5.6 MiB.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, units := float64(n), []string{"KiB", "MiB", "GiB", "TiB"}
	for i, u := range units {
		v /= 1024
		if v < 1024 || i == len(units)-1 {
			return fmt.Sprintf("%.1f %s", v, u)
		}
	}
	return ""
}

// ratio formats the compression ratio of raw bytes stored in stored:
// "3.2x"; "-" when stored is unknown (0).
func ratio(raw, stored int64) string {
	if stored <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", float64(raw)/float64(stored))
}

// storedSize formats bytes stored for people: "-" when unknown (0).
func storedSize(n int64) string {
	if n <= 0 {
		return "-"
	}
	return humanBytes(n)
}

// count formats a number with thousands separators: 12,345.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ago formats the time from t to now for people: "just now", "5 min ago",
// "3 h ago", "2 days ago", or a date past a month.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("2006-01-02 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return countOf(int64(d.Hours()/24), "day") + " ago"
	}
	return t.Local().Format("2006-01-02")
}

// plural is "s" unless n is 1.
func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// countOf formats a number of things: "1 file", "12,345 files".
func countOf(n int64, thing string) string {
	return count(n) + " " + thing + plural(n)
}

// printDamagedObjects prints a line per damaged object of a bucket store.
func printDamagedObjects(w io.Writer, objects []casckpt.DamagedObject) {
	for _, o := range objects {
		fmt.Fprintf(w, "DAMAGED OBJECT %s: %s\n", oneLine(o.Key), oneLine(o.Reason))
	}
}

// oneLine keeps a reason on one line of a table.
func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}

// shellQuote quotes s for a POSIX shell when it holds anything but letters,
// digits and -_./,:=+@%.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
