package main

import (
	"os"
	"strings"
	"testing"
)

// documentsTS is the committed TypeScript types, relative to this package.
const documentsTS = "../../../clients/typescript/src/documents.ts"

// TestDocumentsTSIsGenerated fails when the TypeScript client's document
// types differ from what the jsonapi documents give: a key added to (or
// removed from) a document, or whose type, nullability or omission
// changed, and not in documents.ts. It names the first line that differs.
func TestDocumentsTSIsGenerated(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(documentsTS)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) == string(want) {
		return
	}
	old, now := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(old), len(now)) {
		var o, n string
		if i < len(old) {
			o = old[i]
		}
		if i < len(now) {
			n = now[i]
		}
		if o != n {
			t.Errorf("clients/typescript/src/documents.ts:%d is %q, the jsonapi documents give %q", i+1, o, n)
			break
		}
	}
	t.Error("clients/typescript/src/documents.ts is not what the jsonapi documents give: run go generate ./jsonapi")
}

// TestTypes pins how Go types become TypeScript types.
func TestTypes(t *testing.T) {
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	ts := string(b)
	for _, want := range []string{
		"export interface ErrorDocument {\n  error: string;\n  exit: number;\n}",   // Error renamed
		"  id: string | null;\n  project: string;\n",                               // *string, jsonapi.Path
		"export type List = ListItem[];",                                           // a slice document
		"  damaged?: boolean;\n",                                                   // omitempty
		"  machine?: string;\n}",                                                   // *string omitempty is never null
		"  files: DiffFile[];",                                                     // a slice of a struct
		"  kept?: PathReason[];",                                                   // *[]T omitempty
		"  start_number: number | null;",                                           // *uint64
		"  hooks: Record<string, HookEntry[]>;",                                    // a map
		"  result: unknown;",                                                       // any
		"  /** the snapshot's stable #N in its project */\n  number: number;",      // a field's comment
		"/**\n * Snapshot is snapshot's document.\n *\n * (jsonapi.Snapshot)\n */", // a type's
		`  "prune": Prune | PruneSkipped;`,                                         // two documents of one command
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("documents.ts lacks %q", want)
		}
	}
	if strings.Count(ts, "export interface PathReason ") != 1 {
		t.Error("PathReason, used by two documents, is not declared once")
	}
}
