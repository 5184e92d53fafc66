package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/casckpt/casckpt/jsonapi"
)

// toolDocuments is, for each tool, the command whose jsonapi document its
// output carries, and the key its output wraps an array document in ("" for
// an object document, whose keys it carries itself).
var toolDocuments = map[string]struct{ command, wrap string }{
	"checkpoint_list":         {"list", "snapshots"},
	"checkpoint_diff":         {"diff", ""},
	"checkpoint_restore":      {"restore", ""},
	"checkpoint_create":       {"snapshot", ""},
	"checkpoint_undo":         {"undo", ""},
	"checkpoint_turns":        {"turns", "turns"},
	"checkpoint_file_history": {"log", "history"},
	"checkpoint_read_file":    {"cat", ""},
	"checkpoint_ls":           {"ls", "entries"},
	"checkpoint_pin":          {"pin", ""},
	"checkpoint_record_write": {"record-write", ""},
}

// toolOnly are the keys a tool's output adds to its command's document.
var toolOnly = []string{"store", "patch_truncated"}

// TestOutputSchemasCarryEveryDocumentField fails when a tool's output
// schema, as a client reads it from tools/list, lacks a key of its
// command's jsonapi document, gives it another JSON type, lets it be null
// or not where the document does (or not), or has a key the document
// lacks; and when a tool has no document.
func TestOutputSchemasCarryEveryDocumentField(t *testing.T) {
	cs := connect(t, func(context.Context, []string) ([]byte, error) { return nil, errors.New("unused") })
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]jsonapi.Doc{}
	for _, d := range jsonapi.Documents() {
		docs[d.Command] = d.Value
	}
	for _, tool := range list.Tools {
		want, ok := toolDocuments[tool.Name]
		doc, known := docs[want.command]
		if !ok || !known {
			t.Errorf("tool %s has no jsonapi document in toolDocuments", tool.Name)
			continue
		}
		raw, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var root jsonschema.Schema
		if err := json.Unmarshal(raw, &root); err != nil {
			t.Fatalf("%s's output schema: %v", tool.Name, err)
		}
		for _, p := range schemaDrift(&root, doc, want.wrap) {
			t.Errorf("tool %s (casckpt %s --json): %s", tool.Name, want.command, p)
		}
	}
}

// schemaDrift lists where the output schema root differs from the keys
// of document doc (wrapped in key wrap when it is an array).
func schemaDrift(root *jsonschema.Schema, doc jsonapi.Doc, wrap string) []string {
	objects := map[string]*jsonschema.Schema{"": root}
	if wrap != "" {
		objects["[]"] = items(root.Properties[wrap])
	}
	seen := map[string][]string{"": append([]string{wrap}, toolOnly...)}
	var out []string
	for _, f := range jsonapi.Fields(doc) {
		obj := objects[f.Object]
		if obj == nil {
			out = append(out, "no object "+f.Object+" in the schema for key "+f.Key)
			continue
		}
		seen[f.Object] = append(seen[f.Object], f.Key)
		p := obj.Properties[f.Key]
		if p == nil {
			out = append(out, "the schema lacks key "+where(f))
			continue
		}
		types := p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
		nullable := slices.Contains(types, "null")
		types = slices.DeleteFunc(slices.Clone(types), func(s string) bool { return s == "null" })
		if !slices.Equal(types, []string{f.Type}) {
			out = append(out, "key "+where(f)+" is "+f.Type+" in the document, "+jsonString(types)+" in the schema")
		}
		if f.Nullable && !nullable {
			out = append(out, "key "+where(f)+" may be null in the document, not in the schema")
		}
		if f.Type == "array" {
			objects[f.Path()+"[]"] = items(p)
		}
	}
	for name, obj := range objects {
		for key := range obj.Properties {
			if !slices.Contains(seen[name], key) {
				out = append(out, "the schema has key "+key+" in object "+jsonString(name)+", the document has not")
			}
		}
	}
	slices.Sort(out)
	return out
}

// items is the schema of the elements of array schema s (nil if none).
func items(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil || s.Items == nil {
		return &jsonschema.Schema{}
	}
	return s.Items
}

// where names f for a message.
func where(f jsonapi.Field) string {
	if f.Object == "" {
		return f.Key
	}
	return f.Object + "." + f.Key
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
