package jsonapi

import (
	"reflect"
	"strings"
)

// Document is one --json document: the command that prints it, as the
// ### heading of docs/commands.md names it ("" for Error, which every
// command prints on failure), and a zero value of its type ([]T for a
// document that is an array of T).
type Document struct {
	Command string
	Value   any
}

// Documents lists every --json document, in the order of
// docs/commands.md. A command with two documents (prune) lists both.
func Documents() []Document {
	return []Document{
		{"", Error{}},
		{"snapshot", Snapshot{}},
		{"list", []ListItem{}},
		{"turns", []Turn{}},
		{"diff", Diff{}},
		{"restore", Restore{}},
		{"record-write", RecordWrite{}},
		{"undo", Undo{}},
		{"redo", Undo{}},
		{"cat", Cat{}},
		{"ls", []LsItem{}},
		{"log", []LogItem{}},
		{"pin", Pin{}},
		{"unpin", Unpin{}},
		{"forget", Forget{}},
		{"status", Status{}},
		{"prune", Prune{}},
		{"prune", PruneSkipped{}},
		{"gc", GC{}},
		{"verify", Verify{}},
		{"repair", Repair{}},
		{"export", Export{}},
		{"migrate", Migrate{}},
		{"clear", Clear{}},
		{"clear-legacy", ClearLegacy{}},
		{"root", Root{}},
		{"version", Version{}},
	}
}

// Field is one key of a document's objects.
type Field struct {
	// Object is where the key is: "" in the document itself, "[]" in
	// each element of a document that is an array, "files[]" in each
	// element of the document's array "files", "a.b" in its object "a"'s
	// object "b".
	Object string
	// Key is the JSON key.
	Key string
	// Type is the JSON type of the value: "string", "integer", "number",
	// "boolean", "array" or "object".
	Type string
	// Nullable says the value may be null (a pointer); OmitEmpty that the
	// key is left out when the value is empty.
	Nullable, OmitEmpty bool
}

// Fields lists the keys of the document v (a Document's Value), object by
// object in the order they are written, each object before those nested
// in it.
func Fields(v any) []Field {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Slice {
		return fieldsOf(t.Elem(), "[]")
	}
	return fieldsOf(t, "")
}

// fieldsOf lists the keys of struct type t at object, then those of the
// objects nested in it.
func fieldsOf(t reflect.Type, object string) []Field {
	var own, nested []Field
	for _, f := range flatFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		field := Field{Object: object, Key: name, OmitEmpty: strings.Contains(opts, "omitempty")}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft, field.Nullable = ft.Elem(), true
		}
		field.Type = jsonType(ft)
		own = append(own, field)
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			nested = append(nested, fieldsOf(ft.Elem(), join(object, name)+"[]")...)
		case ft.Kind() == reflect.Struct:
			nested = append(nested, fieldsOf(ft, join(object, name))...)
		}
	}
	return append(own, nested...)
}

// flatFields is t's exported fields with a json key, those of embedded
// structs in their place, as encoding/json writes them.
func flatFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Tag.Get("json") == "-":
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, flatFields(f.Type)...)
		case f.IsExported():
			out = append(out, f)
		}
	}
	return out
}

// join is the object path of key name inside object.
func join(object, name string) string {
	if object == "" || object == "[]" {
		return object + name
	}
	return object + "." + name
}

// jsonType is the JSON type encoding/json writes a value of t as.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return "any"
}
