// Command pyfields writes the Python client's field list
// (clients/python/casckpt/fields.json) from the documents of package
// jsonapi: for each command, and for each array of objects in its
// document ("list[]", "diff.files[]"), the keys the client carries into
// its results, in the document's order, each with its JSON type as
// jsonapi.Field.JSONType writes it ("string|null"). Run it through
// go generate ./jsonapi.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/jsonapi/internal/genout"
)

func main() { genout.Main("pyfields", generate) }

// object is the keys of one object of a command's documents, in order,
// and their types.
type object struct {
	keys  []string
	types map[string]string
}

// generate is fields.json: the keys of every object of every document,
// by command ("error" for jsonapi.Error) and object, the keys of two
// documents of one command merged; the objects sorted by name.
func generate() ([]byte, error) {
	objects := map[string]*object{}
	for _, d := range jsonapi.Documents() {
		command := d.Command
		if command == "" {
			command = "error"
		}
		for _, f := range jsonapi.Fields(d.Value) {
			name := command
			switch {
			case strings.HasPrefix(f.Object, "["):
				name += f.Object
			case f.Object != "":
				name += "." + f.Object
			}
			o := objects[name]
			if o == nil {
				o = &object{types: map[string]string{}}
				objects[name] = o
			}
			switch t, ok := o.types[f.Key]; {
			case !ok:
				o.keys = append(o.keys, f.Key)
				o.types[f.Key] = f.JSONType()
			case t != f.JSONType():
				return nil, fmt.Errorf("%s: key %q is %s in one document of %s, %s in another", name, f.Key, t, command, f.JSONType())
			}
		}
	}
	var b bytes.Buffer
	sep := "{\n"
	for _, name := range slices.Sorted(maps.Keys(objects)) {
		fmt.Fprintf(&b, "%s  %s: {\n", sep, quote(name))
		for i, k := range objects[name].keys {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "    %s: %s", quote(k), quote(objects[name].types[k]))
		}
		b.WriteString("\n  }")
		sep = ",\n"
	}
	b.WriteString("\n}\n")
	return b.Bytes(), nil
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
