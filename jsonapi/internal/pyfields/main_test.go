package main

import (
	"bytes"
	"os"
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
	if !bytes.Equal(got, want) {
		t.Fatalf("clients/python/casckpt/fields.json is not what the jsonapi documents give: run go generate ./jsonapi\ngot:\n%s\nwant:\n%s", got, want)
	}
}
