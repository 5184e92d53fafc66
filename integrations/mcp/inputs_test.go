package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// TestInputSchemasAreTheInputTypes fails when the tools a client lists
// are not those of mcp.Tools, or a tool's input schema differs from its
// Input type: a property the type lacks or the reverse, another JSON
// type, or required where the field has omitempty (or the reverse).
func TestInputSchemasAreTheInputTypes(t *testing.T) {
	cs := connect(t, func(context.Context, []string) ([]byte, error) { return nil, errors.New("unused") })
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]mcp.Tool{}
	for _, s := range mcp.Tools() {
		specs[s.Name] = s
	}
	var listed []string
	for _, tool := range list.Tools {
		listed = append(listed, tool.Name)
		spec, ok := specs[tool.Name]
		if !ok {
			t.Errorf("tool %s is not in mcp.Tools", tool.Name)
			continue
		}
		var schema jsonschema.Schema
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatalf("%s's input schema: %v", tool.Name, err)
		}
		var names, required []string
		for _, f := range reflect.VisibleFields(spec.Input) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
			if !strings.Contains(opts, "omitempty") {
				required = append(required, name)
			}
			p := schema.Properties[name]
			if p == nil {
				t.Errorf("%s's input schema lacks %s (%s.%s)", tool.Name, name, spec.Input.Name(), f.Name)
				continue
			}
			types := slices.DeleteFunc(append([]string{p.Type}, p.Types...), func(s string) bool { return s == "" || s == "null" })
			if want := inputType(f.Type); !slices.Equal(types, []string{want}) {
				t.Errorf("%s's argument %s is %q in the schema, %s in %s.%s", tool.Name, name, types, want, spec.Input.Name(), f.Name)
			}
		}
		for name := range schema.Properties {
			if !slices.Contains(names, name) {
				t.Errorf("%s's input schema has %s, which %s lacks", tool.Name, name, spec.Input.Name())
			}
		}
		slices.Sort(required)
		if got := slices.Sorted(slices.Values(schema.Required)); !slices.Equal(got, required) {
			t.Errorf("%s requires %q, %s's fields without omitempty are %q", tool.Name, got, spec.Input.Name(), required)
		}
	}
	var want []string
	for _, s := range mcp.Tools() {
		want = append(want, s.Name)
	}
	if slices.Sort(listed); !slices.Equal(listed, slices.Sorted(slices.Values(want))) {
		t.Errorf("the server lists %q, mcp.Tools %q", listed, want)
	}
}

// inputType is the JSON type of an argument of Go type t.
func inputType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Slice:
		return "array"
	}
	return "object"
}

// commandsDoc is docs/commands.md, relative to this package.
const commandsDoc = "../../docs/commands.md"

// toolRow is a row of docs/commands.md's table of the tools: | `tool` |
// `command ...` | arguments | result |.
var toolRow = regexp.MustCompile("(?m)^  \\| `(checkpoint_\\w+)` \\| `([\\w-]+)[^|]*` \\| ([^|]*) \\|")

// TestCommandsDocListsEveryArgument fails when docs/commands.md's table
// of the tools (section mcp) names another command than mcp.Tools, or
// other arguments besides dir than the tool's Input type has, or marks
// an argument "(required" that is not required, or the reverse.
func TestCommandsDocListsEveryArgument(t *testing.T) {
	raw, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, m := range toolRow.FindAllStringSubmatch(string(raw), -1) {
		rows[m[1]] = m[1:]
	}
	for _, spec := range mcp.Tools() {
		row, ok := rows[spec.Name]
		if !ok {
			t.Errorf("docs/commands.md's table of the tools has no row of %s", spec.Name)
			continue
		}
		if row[1] != spec.Command {
			t.Errorf("docs/commands.md: %s runs %s, mcp.Tools says %s", spec.Name, row[1], spec.Command)
		}
		var want []string // "name" or "name (required"
		for _, f := range reflect.VisibleFields(spec.Input) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "dir" {
				continue
			}
			if !strings.Contains(opts, "omitempty") {
				name += " (required"
			}
			want = append(want, name)
		}
		if got := docArguments(row[2]); !slices.Equal(got, want) {
			t.Errorf("docs/commands.md lists the arguments of %s as %q; %s has %q", spec.Name, got, spec.Input.Name(), want)
		}
	}
}

// docArguments reads a table cell that lists arguments ("`snap`
// (required), `paths`, `dry_run` (default `true`)"): each argument, with
// " (required" when it is marked so, in order.
func docArguments(cell string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range cell + "," {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			item := strings.TrimSpace(cell[start:min(i, len(cell))])
			start = i + 1
			name, rest, _ := strings.Cut(strings.TrimPrefix(item, "`"), "`")
			if strings.HasPrefix(strings.TrimSpace(rest), "(required") {
				name += " (required"
			}
			out = append(out, name)
		}
	}
	return out
}
