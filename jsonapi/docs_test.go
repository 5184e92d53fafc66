package jsonapi_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/jsonapi"
)

// commandsDoc is docs/commands.md, relative to this package.
const commandsDoc = "../docs/commands.md"

// TestCommandsDocTemplatesFitTheDocuments fails when a JSON template in
// docs/commands.md's section of a command (a code span that starts with {
// or [; the text before "## Commands" for Error) has a key that none of
// the section's documents has, or gives a key a type (`"id":
// string|null`, `"n": int`, `"x": [...]`) that its field does not have,
// null included. (Every key, with its type, is in the section's
// generated table: TestCommandsDocTablesAreGenerated.)
func TestCommandsDocTemplatesFitTheDocuments(t *testing.T) {
	raw, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	sections := docSections(string(raw))
	fields := map[string][]jsonapi.Field{} // the fields of every document, by section
	for _, d := range jsonapi.Documents() {
		heading, _, ok := sectionOf(sections, d.Command)
		if !ok {
			t.Errorf("docs/commands.md has no ### heading for %s", d.Command)
			continue
		}
		fields[heading] = append(fields[heading], jsonapi.Fields(d.Value)...)
	}
	for heading, documented := range fields {
		for _, k := range templateKeys(sections[heading]) {
			if !slices.ContainsFunc(documented, func(f jsonapi.Field) bool { return f.Key == k.key }) {
				t.Errorf("docs/commands.md, %s: a JSON template has %q, which no jsonapi document of the section has", heading, k.key)
			} else if k.typ != "" && !slices.ContainsFunc(documented, k.fits) {
				t.Errorf("docs/commands.md, %s: a JSON template gives %q the value %s, which fits no key %q of the section's jsonapi documents", heading, k.key, k.value, k.key)
			}
		}
	}
}

// docSections splits the commands doc into its ### sections, by heading;
// "" is the text before "## Commands".
func docSections(doc string) map[string]string {
	out := map[string]string{}
	pre, rest, _ := strings.Cut(doc, "\n## Commands\n")
	out[""] = pre
	heading := ""
	for _, line := range strings.SplitAfter(rest, "\n") {
		switch {
		case strings.HasPrefix(line, "### "):
			heading = strings.TrimSpace(line)
		case strings.HasPrefix(line, "## "):
			heading = "" // the end of the commands; "" is taken
			continue
		}
		if heading != "" {
			out[heading] += line
		}
	}
	return out
}

// sectionOf is the heading and text of command's section: the one whose
// heading names it first in a code span ("" for Error's).
func sectionOf(sections map[string]string, command string) (heading, text string, ok bool) {
	if command == "" {
		return "", sections[""], true
	}
	for h, text := range sections {
		if strings.Contains(h, "`"+command+" ") || strings.Contains(h, "`"+command+"`") {
			return h, text, true
		}
	}
	return "", "", false
}

var (
	codeSpan    = regexp.MustCompile("`([{\\[][^`]*)`")
	templateKey = regexp.MustCompile(`[{\[,]\s*"([A-Za-z_]+)"(?::\s*(\[|\{|"|[0-9]+|true|false|[a-z]+(?:\|null)?))?`)
)

// docTypes are the JSON types of the values a template gives, by how it
// writes them: a type name, a literal, or the start of an array or object.
var docTypes = map[string]string{"bool": "boolean", "true": "boolean", "false": "boolean", "int": "integer",
	"string": "string", "id": "string", "path": "string", `"`: "string", "[": "array", "{": "object"}

// templateField is a key of a JSON template, with the value it gives
// (if any) and that value's JSON type (if known).
type templateField struct {
	key, value, typ string
	null            bool
}

// fits reports whether f, a key of a document, is what k describes: the
// same key, the same JSON type, and null where k allows it and only there
// (a key left out when empty need not say null).
func (k templateField) fits(f jsonapi.Field) bool {
	return f.Key == k.key && f.Type == k.typ && k.null == (f.Nullable && !f.OmitEmpty)
}

// templateKeys lists the keys of the JSON templates in text (the quoted
// names that open an object or follow a comma in a code span that starts
// with { or [), with the type of the value each gives.
func templateKeys(text string) []templateField {
	var out []templateField
	for _, span := range codeSpan.FindAllStringSubmatch(text, -1) {
		for _, m := range templateKey.FindAllStringSubmatch(span[1], -1) {
			v, null := strings.CutSuffix(m[2], "|null")
			typ := docTypes[v]
			if typ == "" && v != "" && v[0] >= '0' && v[0] <= '9' {
				typ = "integer"
			}
			out = append(out, templateField{key: m[1], value: m[2], typ: typ, null: null})
		}
	}
	return out
}
