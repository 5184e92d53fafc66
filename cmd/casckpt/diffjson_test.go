package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffDoc is diff's document with each change's values as written, so
// that a test sees their exact bytes (numbers included).
type diffDoc struct {
	Files []struct {
		Path        string `json:"path"`
		Status      string `json:"status"`
		Insertions  int64  `json:"insertions"`
		JSONChanges *[]struct {
			Path string          `json:"path"`
			Op   string          `json:"op"`
			From json.RawMessage `json:"from"`
			To   json.RawMessage `json:"to"`
		} `json:"json_changes"`
	} `json:"files"`
}

// changeLines writes a file's json_changes one a line: op path from to,
// "-" for a value left out.
func changeLines(t *testing.T, doc diffDoc, path string) string {
	t.Helper()
	for _, f := range doc.Files {
		if f.Path != path {
			continue
		}
		if f.JSONChanges == nil {
			t.Fatalf("%s has no json_changes", path)
		}
		var b strings.Builder
		for _, c := range *f.JSONChanges {
			from, to := string(c.From), string(c.To)
			if c.From == nil {
				from = "-"
			}
			if c.To == nil {
				to = "-"
			}
			fmt.Fprintf(&b, "%s %s %s %s\n", c.Op, c.Path, from, to)
		}
		return b.String()
	}
	t.Fatalf("no file %s in the diff", path)
	return ""
}

func TestDiffJSONChanges(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"state.json":  `{"n": 1, "a b": {"x": [1, 2, 3]}, "gone": true, "t": null, "keep": "same", "big": 12345678901234567890.123456789}`,
		"spaces.json": `{"a": [1, 2]}`,
		"broken.json": `{"a": 1}`,
		"notes.txt":   "one\n",
		"scalar.json": "5\n",
	})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{
		"state.json": "{\n  \"n\": 2,\n  \"a b\": {\"x\": [1, \"two\"]},\n  \"t\": {\"k\": []},\n  \"keep\": \"same\",\n" +
			"  \"big\": 12345678901234567890.123456788,\n  \"new\\tkey\": null\n}\n",
		"spaces.json": "{ \"a\" : [ 1 , 2 ] }\n",
		"broken.json": `{"a": 1`,
		"notes.txt":   "two\n",
		"scalar.json": "6\n",
	})
	e.ok("snapshot", dir)
	doc := jsonOf[diffDoc](t, e.ok("diff", dir, "#1", "#2", "--json").out)
	want := `changed $["a b"].x[1] 2 "two"
removed $["a b"].x[2] 3 -
changed $.big 12345678901234567890.123456789 12345678901234567890.123456788
removed $.gone true -
changed $.n 1 2
added $["new\tkey"] - null
changed $.t null {"k":[]}
`
	if got := changeLines(t, doc, "state.json"); got != want {
		t.Fatalf("json_changes of state.json:\n%s\nwant\n%s", got, want)
	}
	if got := changeLines(t, doc, "spaces.json"); got != "" {
		t.Fatalf("only white space changed, yet json_changes are\n%s", got)
	}
	for _, f := range doc.Files {
		if f.Path != "state.json" && f.Path != "spaces.json" && f.JSONChanges != nil {
			t.Fatalf("%s is no pair of JSON documents, yet has json_changes", f.Path)
		}
		if f.Path == "broken.json" && (f.Status != "modified" || f.Insertions != 1) {
			t.Fatalf("broken.json keeps its line counts: %+v", f)
		}
	}

	out := e.ok("diff", dir, "#1", "#2", "--semantic").out
	for _, want := range []string{
		"diff --git a/state.json b/state.json\n" +
			"~ $[\"a b\"].x[1]: 2 → \"two\"\n- $[\"a b\"].x[2]: 3\n" +
			"~ $.big: 12345678901234567890.123456789 → 12345678901234567890.123456788\n" +
			"- $.gone: true\n~ $.n: 1 → 2\n+ $[\"new\\tkey\"]: null\n~ $.t: null → {\"k\":[]}\n",
		"diff --git a/spaces.json b/spaces.json\n(no value changed)\n",
		// A file that stops parsing, or holds no object or array, keeps its line diff.
		"diff --git a/broken.json b/broken.json\n--- a/broken.json\n+++ b/broken.json\n@@ -1 +1 @@\n",
		"diff --git a/scalar.json b/scalar.json\n--- a/scalar.json\n+++ b/scalar.json\n@@ -1 +1 @@\n-5\n+6\n",
		"diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-one\n+two\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("diff --semantic lacks\n%s\nin\n%s", want, out)
		}
	}
	if strings.Contains(out, "--- a/state.json") {
		t.Fatalf("diff --semantic prints state.json's lines:\n%s", out)
	}
	// Without --semantic the text is the patch, as before.
	if plain := e.ok("diff", dir, "#1", "#2").out; !strings.Contains(plain, "--- a/state.json\n+++ b/state.json\n") || strings.Contains(plain, "~ $") {
		t.Fatalf("diff without --semantic:\n%s", plain)
	}
	failsWith(t, e.run("diff", dir, "#1", "--stat", "--semantic"), 2, "--stat and --semantic")
	coloured := e.ok("diff", dir, "#1", "#2", "--semantic", "--color=always").out
	for _, want := range []string{
		ansiBold + "diff --git a/state.json b/state.json" + ansiReset + "\n",
		ansiRed + "- $.gone: true" + ansiReset + "\n",
		ansiGreen + "+ $[\"new\\tkey\"]: null" + ansiReset + "\n",
		"\n~ $.n: 1 → 2\n",
		ansiRed + "-one" + ansiReset + "\n",
	} {
		if !strings.Contains(coloured, want) {
			t.Errorf("diff --semantic --color=always lacks %q:\n%q", want, coloured)
		}
	}
}

func TestDiffSemanticShortensLongValues(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	long := strings.Repeat("é", 70)
	writeFiles(t, dir, map[string]string{"s.json": `{"s": "short", "o": {}, "a": [], "n": 1}`})
	e.ok("snapshot", dir)
	writeFiles(t, dir, map[string]string{"s.json": fmt.Sprintf(`{"s": %q, "o": {"k": %q}, "a": [%q], "n": 1%s}`, long, long, long, strings.Repeat("0", 70))})
	out := e.ok("diff", dir, "@1", "--semantic").out
	for _, want := range []string{
		`+ $.a[0]: "` + strings.Repeat("é", 49) + `…"`,
		"+ $.o.k: \"" + strings.Repeat("é", 49) + "…\"\n",
		"~ $.n: 1 → 1" + strings.Repeat("0", 49) + "…\n",
		`~ $.s: "short" → "` + strings.Repeat("é", 49) + "…\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("diff --semantic lacks %q in\n%s", want, out)
		}
	}
	writeFiles(t, dir, map[string]string{"s.json": fmt.Sprintf(`{"s": "short", "o": {"k": %q}, "a": [], "n": 1}`, long)})
	e.ok("snapshot", dir)
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"s": "short", "o": [1], "a": [], "n": 1}`), 0o644)
	if out := e.ok("diff", dir, "@1", "--semantic").out; !strings.Contains(out, "~ $.o: {...} → [1]\n") {
		t.Fatalf("a long object is not shortened:\n%s", out)
	}
}
