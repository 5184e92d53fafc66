package jsonapi_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/jsonapi"
)

// TestEveryDocIsListed fails when a type of package jsonapi is a Doc (has
// the method document) and Documents does not list it, or the reverse:
// every check of the documents (docs/commands.md's tables, fields.json,
// the MCP output schemas) goes through Documents.
func TestEveryDocIsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string // the receivers of method document
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "document" {
				docs = append(docs, fn.Recv.List[0].Type.(*ast.Ident).Name)
			}
		}
	}
	var listed []string
	for _, d := range jsonapi.Documents() {
		listed = append(listed, reflect.TypeOf(d.Value).Name())
	}
	for _, d := range docs {
		if !slices.Contains(listed, d) {
			t.Errorf("jsonapi.%s is a Doc that Documents does not list: add it with its command", d)
		}
	}
	for _, l := range listed {
		if !slices.Contains(docs, l) {
			t.Errorf("Documents lists jsonapi.%s, which has no method document", l)
		}
	}
}
