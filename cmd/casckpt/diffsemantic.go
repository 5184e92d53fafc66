package main

import (
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// jsonChanges is the json_changes of a file of diff's document.
func jsonChanges(changes []casckpt.JSONChange) []jsonapi.JSONChange {
	out := make([]jsonapi.JSONChange, 0, len(changes))
	for _, c := range changes {
		jc := jsonapi.JSONChange{Path: c.Path, Op: c.Op}
		if c.From != nil { // a nil RawMessage in From would print null
			jc.From = c.From
		}
		if c.To != nil {
			jc.To = c.To
		}
		out = append(out, jc)
	}
	return out
}

// writeSemantic writes what diff --semantic prints for f, a file whose
// versions are JSON documents: the patch's header up to its "---" line,
// then a line per change (`~ $.a: 5 → 7`, `+ $.b[6]: {...}`, `- $.c: 1`;
// coloured, additions green and removals red), or a line saying no value
// changed.
func writeSemantic(w io.Writer, f casckpt.FileDiff, colour bool) {
	var header strings.Builder
	for line := range strings.Lines(f.Patch) {
		if strings.HasPrefix(line, "--- ") {
			break
		}
		header.WriteString(line)
	}
	if colour {
		colourPatch(w, header.String())
	} else {
		io.WriteString(w, header.String())
	}
	if len(f.JSON) == 0 {
		io.WriteString(w, "(no value changed)\n")
	}
	for _, c := range f.JSON {
		var line, paint string
		switch c.Op {
		case "added":
			line, paint = "+ "+c.Path+": "+shortValue(c.To), ansiGreen
		case "removed":
			line, paint = "- "+c.Path+": "+shortValue(c.From), ansiRed
		default:
			line = "~ " + c.Path + ": " + shortValue(c.From) + " → " + shortValue(c.To)
		}
		if colour && paint != "" {
			line = paint + line + ansiReset
		}
		io.WriteString(w, line+"\n")
	}
}

// maxShownValue is the longest value diff --semantic prints whole.
const maxShownValue = 60

// shortValue is v, a compact JSON value, for people: whole when short,
// else an object as {...}, an array as [...], a string or a number cut
// after its first characters and "…".
func shortValue(v json.RawMessage) string {
	s := string(v)
	if utf8.RuneCountInString(s) <= maxShownValue {
		return s
	}
	switch s[0] {
	case '{':
		return "{...}"
	case '[':
		return "[...]"
	}
	runes, cut := 0, 0
	for cut = range s {
		if runes == maxShownValue-10 {
			break
		}
		runes++
	}
	if s[0] == '"' {
		return s[:cut] + `…"`
	}
	return s[:cut] + "…"
}
