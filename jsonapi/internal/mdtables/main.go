// Command mdtables writes the key tables of docs/commands.md from the
// documents of package jsonapi: between the lines
//
//	<!-- jsonapi.T: go generate ./jsonapi writes this table -->
//	<!-- end jsonapi.T -->
//
// a table of every key of document type T (its place, its JSON type and
// that of an array's elements, whether it may be null or be left out), as
// jsonapi.Fields lists them. Every
// document must have such a table in the section of its command (the ###
// heading that names it; the text before "## Commands" for jsonapi.Error).
// Run it through go generate ./jsonapi.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/jsonapi"
)

func main() {
	file := flag.String("w", "", "the commands doc to rewrite in place")
	flag.Parse()
	raw, err := os.ReadFile(*file)
	if err == nil {
		var out string
		if out, err = rewrite(string(raw)); err == nil {
			err = os.WriteFile(*file, []byte(out), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mdtables:", err)
		os.Exit(1)
	}
}

// begin is a table's first marker line; its group the type's name.
var begin = regexp.MustCompile(`^<!-- jsonapi\.(\w+): go generate \./jsonapi writes this table -->$`)

// rewrite is doc with every table between markers as the jsonapi documents
// give it, or an error naming each table that is missing, misplaced,
// unended or of no document.
func rewrite(doc string) (string, error) {
	types := map[string]jsonapi.Doc{} // by type name
	for _, d := range jsonapi.Documents() {
		types[reflect.TypeOf(d.Value).Name()] = d.Value
	}
	var out strings.Builder
	var errs []error
	tables := map[string][]string{} // the headings of each type's tables
	// heading is the section's: "" before "## Commands", then each ### or
	// ## heading ("## Commands" and the later ## ones hold no command).
	heading, commands, lines := "", false, strings.SplitAfter(doc, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		commands = commands || strings.TrimSpace(line) == "## Commands"
		switch m := begin.FindStringSubmatch(strings.TrimSpace(line)); {
		case commands && (strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ")):
			heading = strings.TrimSpace(line)
		case m != nil:
			v, ok := types[m[1]]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: a table of jsonapi.%s, which is no document", orGlobal(heading), m[1]))
			}
			end := slices.IndexFunc(lines[i+1:], func(l string) bool { return strings.TrimSpace(l) == "<!-- end jsonapi."+m[1]+" -->" })
			if end < 0 {
				return doc, fmt.Errorf("%s: the table of jsonapi.%s has no line <!-- end jsonapi.%s -->", orGlobal(heading), m[1], m[1])
			}
			if ok {
				out.WriteString(table(v))
				tables[m[1]] = append(tables[m[1]], heading)
			}
			i += end
		}
	}
	for _, d := range jsonapi.Documents() {
		name := reflect.TypeOf(d.Value).Name()
		if !slices.ContainsFunc(tables[name], func(h string) bool { return names(h, d.Command) }) {
			errs = append(errs, fmt.Errorf("%s has no table of jsonapi.%s (%s's document): add the lines %q and %q there and run go generate ./jsonapi",
				orGlobal(sectionName(d.Command)), name, orEvery(d.Command), "<!-- jsonapi."+name+": go generate ./jsonapi writes this table -->", "<!-- end jsonapi."+name+" -->"))
		}
	}
	return out.String(), errors.Join(errs...)
}

// table is the markdown table of the keys of document v.
func table(v jsonapi.Doc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe keys of `jsonapi.%s`:\n\n| key | JSON type |\n|---|---|\n", reflect.TypeOf(v).Name())
	for _, f := range jsonapi.Fields(v) {
		typ := f.Type
		if f.Items != "" {
			typ += " of " + f.Items
		}
		if f.Nullable && !f.OmitEmpty {
			typ += " or null"
		}
		if f.OmitEmpty {
			typ += ", left out when " + emptyValue(f)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", f.Path(), typ)
	}
	b.WriteString("\n")
	return b.String()
}

// names reports whether heading is the section of command: "" for the
// error document (the text before "## Commands"), else a ### heading that
// names command in a code span.
func names(heading, command string) bool {
	if command == "" {
		return heading == ""
	}
	return strings.HasPrefix(heading, "### ") &&
		(strings.Contains(heading, "`"+command+" ") || strings.Contains(heading, "`"+command+"`"))
}

// sectionName describes command's section for a message.
func sectionName(command string) string {
	if command == "" {
		return ""
	}
	return "the ### section of " + command
}

// orGlobal names heading for a message; "" is the text before "## Commands".
func orGlobal(heading string) string {
	if heading == "" {
		return "docs/commands.md, before ## Commands,"
	}
	return "docs/commands.md, " + heading + ","
}

// orEvery names command for a message; "" is every command's error.
func orEvery(command string) string {
	if command == "" {
		return "every command's error"
	}
	return command
}

// emptyValue is the value that f, a key with omitempty, is left out at.
func emptyValue(f jsonapi.Field) string {
	switch {
	case f.Nullable:
		return "unset"
	case f.Type == "boolean":
		return "false"
	case f.Type == "integer" || f.Type == "number":
		return "0"
	}
	return "empty"
}
