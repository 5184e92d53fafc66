package main

import (
	"os"
	"strings"
	"testing"
)

// commandsDoc is the commands doc, relative to this package.
const commandsDoc = "../../../docs/commands.md"

// TestCommandsDocTablesAreGenerated fails when a table of docs/commands.md
// differs from what the jsonapi documents give (a key added, removed,
// moved, or of another type, nullability or omission), when a document
// has no table in its command's section, and when a table is of no
// document.
func TestCommandsDocTablesAreGenerated(t *testing.T) {
	raw, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rewrite(string(raw))
	if err != nil {
		t.Error(err)
	}
	if got == string(raw) {
		return
	}
	old, now := strings.Split(string(raw), "\n"), strings.Split(got, "\n")
	table := ""
	for i := range min(len(old), len(now)) {
		if m := begin.FindStringSubmatch(old[i]); m != nil {
			table = "the table of jsonapi." + m[1] + ", "
		}
		if old[i] != now[i] {
			t.Errorf("docs/commands.md:%d, %sis %q, the jsonapi documents give %q", i+1, table, old[i], now[i])
			break
		}
	}
	t.Error("docs/commands.md's key tables are not what the jsonapi documents give: run go generate ./jsonapi")
}

// TestMissingTableIsNamed checks that a document without a table in its
// command's section, and a table of no document, are errors.
func TestMissingTableIsNamed(t *testing.T) {
	raw, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(raw), "<!-- jsonapi.GC:", "<!-- jsonapi.NoSuchDocument:", 1)
	doc = strings.Replace(doc, "<!-- end jsonapi.GC -->", "<!-- end jsonapi.NoSuchDocument -->", 1)
	_, err = rewrite(doc)
	for _, want := range []string{"has no table of jsonapi.GC (gc's document)", "a table of jsonapi.NoSuchDocument, which is no document"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("rewrite without gc's table: %v, want %q", err, want)
		}
	}
}
