package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// fieldsJSON is the committed field list, relative to this package.
const fieldsJSON = "../../../clients/python/casckpt/fields.json"

// TestFieldsJSONIsGenerated fails when the Python client's field list
// differs from what the jsonapi documents give: a key added to (or
// removed from) a document, or whose JSON type or nullability changed,
// and not in fields.json; the keys' order counts too.
func TestFieldsJSONIsGenerated(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(fieldsJSON)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	var g, w map[string]map[string]string
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("clients/python/casckpt/fields.json: %v: run go generate ./jsonapi", err)
	}
	_ = json.Unmarshal(want, &w)
	for _, name := range slices.Sorted(maps.Keys(w)) {
		for _, k := range slices.Sorted(maps.Keys(w[name])) {
			if typ, ok := g[name][k]; !ok {
				t.Errorf("clients/python/casckpt/fields.json lacks %s %q (%s)", name, k, w[name][k])
			} else if typ != w[name][k] {
				t.Errorf("clients/python/casckpt/fields.json has %s %q as %s, the jsonapi documents give %s", name, k, typ, w[name][k])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g)) {
		for _, k := range slices.Sorted(maps.Keys(g[name])) {
			if _, ok := w[name][k]; !ok {
				t.Errorf("clients/python/casckpt/fields.json has %s %q, which no jsonapi document has", name, k)
			}
		}
	}
	t.Error("clients/python/casckpt/fields.json is not what the jsonapi documents give: run go generate ./jsonapi")
}
