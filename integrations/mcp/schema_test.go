package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/casckpt/casckpt/integrations/mcp"
	"github.com/casckpt/casckpt/jsonapi"
)

// wraps is, for each tool whose command prints an array, the key its
// output wraps the array in (the others carry their document's keys
// themselves).
var wraps = map[string]string{
	"checkpoint_list":         "snapshots",
	"checkpoint_turns":        "turns",
	"checkpoint_file_history": "history",
	"checkpoint_ls":           "entries",
}

// toolOnly are the keys a tool's output adds to its command's document.
var toolOnly = []string{"store", "patch_truncated"}

// TestOutputSchemasCarryEveryDocumentField fails when a tool's output
// schema, as a client reads it from tools/list, lacks a key of its
// command's jsonapi document (the command mcp.Tools names), gives it
// another JSON type (or its array's elements another), lets it be null
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
	commands := map[string]string{}
	for _, s := range mcp.Tools() {
		commands[s.Name] = s.Command
	}
	for _, tool := range list.Tools {
		command := commands[tool.Name]
		doc, known := docs[command]
		if !known {
			t.Errorf("tool %s runs %q, which prints no jsonapi document", tool.Name, command)
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
		for _, p := range schemaDrift(&root, doc, wraps[tool.Name]) {
			t.Errorf("tool %s (casckpt %s --json): %s", tool.Name, command, p)
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
		nullable := slices.Contains(p.Types, "null")
		types := schemaTypes(p)
		if f.Type == "any" && len(types) != 0 || f.Type != "any" && !slices.Equal(types, []string{f.Type}) { // any: no type in the schema
			out = append(out, "key "+where(f)+" is "+f.Type+" in the document, "+jsonString(types)+" in the schema")
		}
		if f.Nullable && !nullable {
			out = append(out, "key "+where(f)+" may be null in the document, not in the schema")
		}
		if f.Type == "array" {
			objects[f.Path()+"[]"] = items(p)
			if it := schemaTypes(items(p)); !slices.Equal(it, []string{f.Items}) {
				out = append(out, "the elements of "+where(f)+" are "+f.Items+" in the document, "+jsonString(it)+" in the schema")
			}
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

// schemaTypes are the JSON types schema s allows, null aside.
func schemaTypes(s *jsonschema.Schema) []string {
	return slices.DeleteFunc(append([]string{s.Type}, s.Types...), func(t string) bool { return t == "" || t == "null" })
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
