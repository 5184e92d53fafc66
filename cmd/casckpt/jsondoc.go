package main

import (
	"github.com/casckpt/casckpt"
	"github.com/casckpt/casckpt/jsonapi"
)

// This file holds what several commands use to fill their jsonapi
// documents: null for what is absent, [] for an empty list.

// idOrNull is a snapshot ID for JSON: null when there is none.
func idOrNull(id casckpt.ID) *string {
	if id.IsZero() {
		return nil
	}
	s := id.String()
	return &s
}

// labelOrNull is a session or turn ID for JSON: null when there is none.
func labelOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// damagedObjectsJSON returns the JSON of objects, never nil.
func damagedObjectsJSON(objects []casckpt.DamagedObject) []jsonapi.ObjectReason {
	out := make([]jsonapi.ObjectReason, 0, len(objects))
	for _, o := range objects {
		out = append(out, jsonapi.ObjectReason{Key: o.Key, Reason: o.Reason})
	}
	return out
}

// projectOf splits the name under which store knows a project into its
// path and, on a bucket store, its machine (nil for a directory's).
func projectOf(store *casckpt.Store, workdir string) (jsonapi.Path, *string) {
	m, path := casckpt.SplitWorkdir(workdir)
	if m == "" {
		m = store.Machine()
	}
	return jsonapi.Path(path), labelOrNull(m)
}

// orEmpty makes a nil list encode as [], not null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
