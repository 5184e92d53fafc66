package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// fieldsJSON is the committed field list, relative to this package.
const fieldsJSON = "../../../clients/python/casckpt/fields.json"

// TestFieldsJSONIsGenerated fails when the Python client's field list
// differs from what the jsonapi documents give: a field added to (or
// removed from) a document and not to fields.json.
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
	var g, w map[string][]string
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("clients/python/casckpt/fields.json: %v: run go generate ./jsonapi", err)
	}
	_ = json.Unmarshal(want, &w)
	for k := range w {
		if !slices.Equal(g[k], w[k]) {
			t.Errorf("clients/python/casckpt/fields.json has %s: %q, the jsonapi documents give %q", k, g[k], w[k])
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			t.Errorf("clients/python/casckpt/fields.json has %s, which no jsonapi document has", k)
		}
	}
	t.Error("clients/python/casckpt/fields.json is not what the jsonapi documents give: run go generate ./jsonapi")
}
