package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// pyClientDir is the Python client's directory, relative to this package.
const pyClientDir = "../../clients/python"

// TestPythonClient runs the Python client's unittest suite (a port of
// Hermes' CheckpointManager tests) against the built binary.
func TestPythonClient(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH: the Python client's tests cannot run")
	}
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute) // the suite runs twice: resident and a process per call
	defer cancel()
	c := exec.CommandContext(ctx, py, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	c.Dir = pyClientDir
	c.Env = append(os.Environ(), "CASCKPT_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1", "HOME="+t.TempDir(),
		"CASCKPT_HOME="+filepath.Join(t.TempDir(), "unused-store"))
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest in clients/python: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("OK")) || bytes.Contains(out, []byte("skipped=")) {
		t.Fatalf("python unittest did not run every test:\n%s", out)
	}
}

// TestPythonClientCarriesEveryField fails when a command prints a JSON key
// that the Python client does not declare in casckpt/fields.json (the keys it
// carries into its result dicts), or a value of another JSON type than the
// one fields.json gives it (null where it does not say "|null").
func TestPythonClientCarriesEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pyClientDir, "casckpt", "fields.json"))
	if err != nil {
		t.Fatal(err)
	}
	var declared map[string]map[string]string
	if err := json.Unmarshal(raw, &declared); err != nil {
		t.Fatalf("fields.json: %v", err)
	}
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "proj")
	writeFiles(t, dir, map[string]string{"go.mod": "module x\n", "a.txt": "a\n"})
	docs := map[string]string{}
	docs["snapshot"] = b.ok("snapshot", dir, "-m", "one", "--session", "s", "--turn", "t1", "--json").out
	writeFiles(t, dir, map[string]string{"a.txt": "agent\n", "b.txt": "new\n"})
	docs["record-write"] = b.ok("record-write", dir, "a.txt", "--json").out
	b.ok("snapshot", dir, "--turn", "t2", "--end-turn", "--json")
	writeFiles(t, dir, map[string]string{"go.mod": "module y\n"})
	docs["list"] = b.ok("list", dir, "--json").out
	docs["diff"] = b.ok("diff", dir, "@2", "--json").out
	docs["restore"] = b.ok("restore", dir, "@2", "--safe", "--dry-run", "--json").out
	docs["status"] = b.ok("status", "--json").out
	docs["root"] = b.ok("root", filepath.Join(dir, "a.txt"), "--json").out
	docs["prune"] = b.ok("prune", "--dry-run", "--json").out
	docs["turns"] = b.ok("turns", dir, "--json").out
	docs["undo"] = b.ok("undo", dir, "--dry-run", "--json").out
	docs["ls"] = b.ok("ls", dir, "@1", "--json").out
	docs["log"] = b.ok("log", dir, "a.txt", "--json").out
	docs["cat"] = b.ok("cat", dir, "@1", "a.txt", "--json").out
	docs["pin"] = b.ok("pin", dir, "@1", "--json").out
	docs["unpin"] = b.ok("unpin", dir, "@1", "--json").out
	docs["forget"] = b.ok("forget", dir, "@2", "--json").out
	docs["gc"] = b.ok("gc", "--json").out
	docs["verify"] = b.ok("verify", "--json").out
	docs["version"] = b.ok("version", "--json").out
	docs["clear"] = b.ok("clear", "--yes", "--json").out
	for cmd, out := range docs {
		var doc any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("casckpt %s --json: %v: %q", cmd, err, out)
		}
		for _, miss := range undeclaredKeys(cmd, doc, declared) {
			t.Errorf("casckpt %s --json prints %s, which clients/python/casckpt/fields.json does not declare: go generate ./jsonapi writes it from the jsonapi documents", cmd, miss)
		}
	}
}

// undeclaredKeys walks doc (the JSON document at path, "list" or
// "diff.files[]") and returns "path.key" for every object key that declared
// does not list for its path, or whose value is not of the type declared.
func undeclaredKeys(path string, doc any, declared map[string]map[string]string) []string {
	var out []string
	switch v := doc.(type) {
	case []any:
		for _, e := range v {
			out = append(out, undeclaredKeys(path+"[]", e, declared)...)
		}
	case map[string]any:
		for k, val := range v {
			if typ, ok := declared[path][k]; !ok {
				out = append(out, path+"."+k)
			} else if got := jsonTypeOf(val); !slices.Contains(strings.Split(typ, "|"), got) {
				out = append(out, path+"."+k+" as "+got+" (declared "+typ+")")
			}
			if arr, ok := val.([]any); ok {
				out = append(out, undeclaredKeys(path+"."+k, arr, declared)...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jsonTypeOf is the JSON type of v, a value encoding/json decoded.
func jsonTypeOf(v any) string {
	switch n := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if n == float64(int64(n)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}
