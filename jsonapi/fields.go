package jsonapi

import (
	"reflect"
	"strings"
)

// Field is one key of a document's objects.
type Field struct {
	// Object is where the key is: "" in the document itself, "[]" in
	// each element of a document that is an array, "files[]" in each
	// element of the document's array "files", "a.b" in its object "a"'s
	// object "b", "hooks[][]" in each element of the arrays that are the
	// values of the document's object "hooks" (a map: its keys are data).
	Object string
	// Key is the JSON key.
	Key string
	// Type is the JSON type of the value: "string", "integer", "number",
	// "boolean", "array" or "object".
	Type string
	// Items is the JSON type of an array's elements ("" for a value that
	// is no array).
	Items string
	// Nullable says the value may be null (a pointer); OmitEmpty that the
	// key is left out when the value is empty.
	Nullable, OmitEmpty bool
}

// Fields lists the keys of the document v (a Document's Value), object by
// object in the order they are written, each object before those nested
// in it.
func Fields(v Doc) []Field {
	return inside(reflect.TypeOf(v), "")
}

// Path is where the field's value is: its Object and Key joined
// ("files[].path", "[].id").
func (f Field) Path() string { return join(f.Object, f.Key) }

// JSONType is the field's value as docs/commands.md's tables and the
// Python client's fields.json write it: its JSON type, then "|null" when
// it may be null.
func (f Field) JSONType() string {
	if f.Nullable {
		return f.Type + "|null"
	}
	return f.Type
}

// fieldsOf lists the keys of struct type t at object, then those of the
// objects nested in it.
func fieldsOf(t reflect.Type, object string) []Field {
	var own, nested []Field
	for _, k := range StructKeys(t) {
		name := k.Key
		field := Field{Object: object, Key: name, OmitEmpty: k.OmitEmpty}
		ft := k.Type
		for ft.Kind() == reflect.Pointer {
			ft, field.Nullable = ft.Elem(), true
		}
		field.Type = jsonType(ft)
		if ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array {
			field.Items = jsonType(ft.Elem())
		}
		own = append(own, field)
		nested = append(nested, inside(ft, join(object, name))...)
	}
	return append(own, nested...)
}

// inside lists the keys of the objects a value of type t at object holds:
// a struct's own, or those of the elements of an array or of the values
// of a map.
func inside(t reflect.Type, object string) []Field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return fieldsOf(t, object)
	case reflect.Slice, reflect.Array, reflect.Map:
		return inside(t.Elem(), object+"[]")
	}
	return nil
}

// StructKey is one key encoding/json writes for a field of a struct: its
// name, whether it is left out when empty (omitempty), and the field's Go
// name and type.
type StructKey struct {
	Key       string
	OmitEmpty bool
	Field     string
	Type      reflect.Type
}

// StructKeys lists the keys encoding/json writes for struct type t, in
// the order it writes them (those of embedded structs in their place).
func StructKeys(t reflect.Type) []StructKey {
	var out []StructKey
	for _, f := range flatFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, StructKey{Key: name, OmitEmpty: strings.Contains(opts, "omitempty"), Field: f.Name, Type: f.Type})
	}
	return out
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
	if object == "" {
		return name
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
