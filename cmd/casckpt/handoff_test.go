package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

func TestNamesBucket(t *testing.T) {
	for _, c := range []struct {
		args []string
		home string
		want bool
	}{
		{[]string{"snapshot", "."}, "", false},
		{[]string{"snapshot", "."}, "/home/u/store", false},
		{[]string{"snapshot", "."}, "s3://b/p", true},
		{[]string{"--store", "s3://b/p", "list"}, "", true},
		{[]string{"list", "--store=s3://b"}, "", true},
		{[]string{"list", "--store", "/tmp/s"}, "s3://b", true}, // leans to yes: the companion runs it too
		{[]string{"list", "--store", "/tmp/s"}, "", false},
		{[]string{"list", "--store"}, "", false},
		{[]string{"cat", ".", "@1", "s3://b"}, "", false},
		{[]string{"snapshot", "-m", "--store", "s3://x"}, "", true}, // a message that reads so: a yes, never wrong
	} {
		env := func(k string) string {
			if k == "CASCKPT_HOME" {
				return c.home
			}
			return ""
		}
		if got := namesBucket(c.args, env); got != c.want {
			t.Errorf("namesBucket(%q, CASCKPT_HOME=%q) = %v, want %v", c.args, c.home, got, c.want)
		}
	}
}

// TestWithoutBucketsHandsOffToCompanion builds casckpt as a release does
// (the tag casckpt_nobucket: no S3 client linked) beside the whole build
// named casckpt-s3. A snapshot and a restore in a real bucket run through
// the companion; a store in a directory needs none; and with the
// companion gone, the s3:// store is refused in one line that says where
// it was looked for and what to do.
func TestWithoutBucketsHandsOffToCompanion(t *testing.T) {
	dir := t.TempDir()
	lean := filepath.Join(dir, "casckpt")
	build := exec.Command("go", "build", "-tags", "casckpt_nobucket", "-o", lean, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags casckpt_nobucket: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "version", "-m", lean).CombinedOutput(); err != nil || strings.Contains(string(out), "minio") {
		t.Fatalf("the build without buckets links the S3 client (%v):\n%s", err, out)
	}
	whole, err := os.ReadFile(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	companionBin := filepath.Join(dir, companion)
	if err := os.WriteFile(companionBin, whole, 0o755); err != nil {
		t.Fatal(err)
	}

	b := newBinEnv(t)
	b.bin = lean
	s3Env(t, b, s3test.Start(t))
	proj := t.TempDir()
	writeFiles(t, proj, map[string]string{"a.txt": "one\n"})
	id := jsonOf[map[string]any](t, b.ok("snapshot", proj, "--json").out)["id"].(string)
	writeFiles(t, proj, map[string]string{"a.txt": "two\n"})
	b.ok("restore", proj, id)
	if got, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(got) != "one\n" {
		t.Fatalf("a.txt after the restore through the companion: %q", got)
	}
	if st := jsonOf[map[string]any](t, b.ok("status", "--json").out); !strings.HasPrefix(st["store"].(string), "s3://") {
		t.Fatalf("status through the companion: %v", st)
	}

	// serve runs its requests in its own process: one naming the bucket
	// runs in the companion as a child, its document and exit the answer's.
	bucketURL := ""
	for _, kv := range b.extra {
		if v, ok := strings.CutPrefix(kv, "CASCKPT_HOME="); ok {
			bucketURL = v
		}
	}
	s := b.serve("--store", filepath.Join(t.TempDir(), "local"))
	a := s.ask(map[string]any{"id": 1, "args": []string{"--store", bucketURL, "list", proj}})
	var listed []map[string]any
	if err := json.Unmarshal(a.Result, &listed); a.Exit != 0 || err != nil || len(listed) != 2 || listed[1]["id"] != id { // the restore's pre-restore snapshot, then the first
		t.Fatalf("serve's list of the bucket: %+v (%v)", a, err)
	}
	a = s.ask(map[string]any{"id": 2, "args": []string{"--store", bucketURL, "cat", proj, "@1", "missing.txt"}})
	if a.Exit != exitFailed || a.Error == nil || !strings.Contains(*a.Error, "missing.txt") || string(a.Result) != "null" {
		t.Fatalf("serve's failed cat in the bucket: %+v", a)
	}

	if err := os.Remove(companionBin); err != nil {
		t.Fatal(err)
	}
	r := b.run("list", proj, "--json")
	doc := jsonOf[map[string]any](t, r.out)
	msg, _ := doc["error"].(string)
	if r.code != exitFailed || !strings.Contains(msg, "this casckpt runs "+companionBin+" for s3:// stores, and it is missing") || !strings.Contains(msg, "reinstall casckpt") || strings.Contains(msg, "\n") {
		t.Fatalf("list without the companion: exit %d, %q", r.code, r.out)
	}

	local := newBinEnv(t)
	local.bin = lean
	writeFiles(t, proj, map[string]string{"a.txt": "three\n"})
	local.ok("snapshot", proj)
	if l := jsonOf[[]map[string]any](t, local.ok("list", proj, "--json").out); len(l) != 1 {
		t.Fatalf("a store in a directory without the companion lists %v", l)
	}
}

func TestIsErrorDoc(t *testing.T) {
	for out, want := range map[string]bool{
		`{"error":"no snapshot @3","exit":1}` + "\n": true,
		`{"error":"x","exit":1,"damaged":[]}`:        false,
		`{"snapshots_checked":2,"damaged":[]}`:       false,
		`[{"id":"ab"}]`:                              false,
		``:                                           false,
	} {
		if got := isErrorDoc([]byte(out)); got != want {
			t.Errorf("isErrorDoc(%q) = %v, want %v", out, got, want)
		}
	}
}

func TestChildEnvTakesTheRequestsNow(t *testing.T) {
	t.Setenv("CASCKPT_TEST_KEEP", "kept")
	env := func(k string) string {
		if k == "CASCKPT_NOW" {
			return "2026-11-27T10:00:00Z"
		}
		return os.Getenv(k)
	}
	got := childEnv(env)
	for _, want := range []string{"CASCKPT_NOW=2026-11-27T10:00:00Z", "CASCKPT_TEST_KEEP=kept"} {
		if !slices.Contains(got, want) {
			t.Errorf("childEnv lacks %s: %v", want, got)
		}
	}
}
