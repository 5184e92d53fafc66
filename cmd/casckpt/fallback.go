package main

import (
	"fmt"
	"strings"

	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// warnFallback says on stderr, in one line, that a fallback used snapshot
// used and why it passed over the newer ones (tried, newest first);
// nothing when it passed over none.
func (g *globals) warnFallback(used casckpt.ID, tried []casckpt.TriedSnapshot) {
	if len(tried) == 0 {
		return
	}
	why := make([]string, len(tried))
	for i, t := range tried {
		why[i] = fmt.Sprintf("%s (%s)", t.ID.Short(), t.Reason)
	}
	g.warn(fmt.Sprintf("used snapshot %s, the newest intact one; passed over %s", used.Short(), strings.Join(why, "; ")))
}

// triedJSON is the tried list of a fallback's document: never null.
func triedJSON(tried []casckpt.TriedSnapshot) []jsonapi.TriedSnapshot {
	out := make([]jsonapi.TriedSnapshot, len(tried))
	for i, t := range tried {
		out[i] = jsonapi.TriedSnapshot{ID: t.ID.String(), Reason: t.Reason}
	}
	return out
}
