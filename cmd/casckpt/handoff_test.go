//go:build !casckpt_lean

package main

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/internal/s3test"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
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

func TestNeedsCompanion(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"snapshot", "."}, false},
		{[]string{"status"}, true},
		{[]string{"--json", "status"}, true},
		{[]string{"--store", "/s", "--color=never", "migrate", "--from", "x"}, true},
		{[]string{"--store", "status", "list"}, false}, // a store named status
		{[]string{"--color", "never", "clear-legacy"}, true},
		{[]string{"mcp"}, true},
		{[]string{"help", "migrate"}, true},
		{[]string{"help", "snapshot"}, false},
		{[]string{"list", "status"}, false}, // a project named status
		{[]string{"--", "status"}, false},
		{[]string{"--store", "s3://b", "list"}, true},
		{nil, false},
	} {
		if got := needsCompanion(c.args, noEnv); got != c.want {
			t.Errorf("needsCompanion(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// rootValueFlags must name every flag of the root command that takes a
// value, or commandName takes a value for the command name.
func TestRootValueFlagsAreTheRootsFlagsWithValues(t *testing.T) {
	root := newRootCommand(&globals{env: func(string) string { return "" }})
	want := map[string]bool{}
	for _, set := range []*pflag.FlagSet{root.PersistentFlags(), root.Flags()} {
		set.VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "bool" {
				want["--"+f.Name] = true
				if f.Shorthand != "" {
					want["-"+f.Shorthand] = true
				}
			}
		})
	}
	if !maps.Equal(want, rootValueFlags) {
		t.Errorf("rootValueFlags = %v, the root command's flags with values are %v", rootValueFlags, want)
	}
}

// leanPair builds casckpt as a release does (the tag casckpt_lean: no S3
// client, go-git or MCP SDK linked, which it checks) into a directory,
// beside the whole build named casckpt-full, and returns both paths.
func leanPair(t *testing.T) (lean, companionBin string) {
	dir := t.TempDir()
	lean = filepath.Join(dir, "casckpt")
	build := exec.Command("go", "build", "-tags", "casckpt_lean", "-o", lean, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags casckpt_lean: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", lean).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{"github.com/minio/minio-go", "github.com/go-git/", "github.com/modelcontextprotocol/"} {
		if strings.Contains(string(out), module) {
			t.Fatalf("the lean build links %s:\n%s", module, out)
		}
	}
	whole, err := os.ReadFile(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	companionBin = filepath.Join(dir, companion)
	if err := os.WriteFile(companionBin, whole, 0o755); err != nil {
		t.Fatal(err)
	}
	return lean, companionBin
}

// TestLeanHandsOffBucketStores: a snapshot and a restore in a real bucket
// run through the companion, as do serve's requests on it; a store in a
// directory needs none; and with the companion gone, the s3:// store is
// refused in one line that says where it was looked for and what to do.
func TestLeanHandsOffBucketStores(t *testing.T) {
	lean, companionBin := leanPair(t)
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

// TestLeanHandsOffWholeCommands: status, migrate and an MCP session (the
// official SDK's client) of a store in a directory run through the
// companion, as does serve's status; with the companion gone, each of
// status, migrate, clear-legacy and mcp is refused in one line that says
// where it was looked for and what to do.
func TestLeanHandsOffWholeCommands(t *testing.T) {
	lean, companionBin := leanPair(t)
	proj := t.TempDir()
	writeFiles(t, proj, map[string]string{"a.txt": "one\n"})
	local := newBinEnv(t)
	local.bin = lean
	local.ok("snapshot", proj)
	if st := jsonOf[map[string]any](t, local.ok("status", "--json").out); st["store"] != local.store() || len(st["projects"].([]any)) != 1 {
		t.Fatalf("status through the companion: %v", st)
	}
	if m := jsonOf[map[string]any](t, local.ok("--store", local.store(), "migrate", "--from", t.TempDir(), "--json").out); m["projects"] != 0.0 {
		t.Fatalf("migrate through the companion: %v", m)
	}
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: local.commandContext(ctx, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	listed, isErr, text := callTool[map[string]any](t, cs, "checkpoint_list", map[string]any{"dir": proj})
	if snaps, _ := listed["snapshots"].([]any); isErr || len(snaps) != 1 || listed["store"] != local.store() {
		t.Fatalf("checkpoint_list through the companion: %v %s", listed, text)
	}
	cs.Close()
	s := local.serve()
	if a := s.ask(map[string]any{"id": 3, "args": []string{"status"}}); a.Exit != 0 || !strings.Contains(string(a.Result), `"legacy":[]`) {
		t.Fatalf("serve's status through the companion: %+v", a)
	}

	if err := os.Remove(companionBin); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"migrate"}, {"clear-legacy", "--yes"}, {"mcp"}} {
		r := local.run(append(args, "--json")...)
		msg, _ := jsonOf[map[string]any](t, r.out)["error"].(string)
		if want := args[0] + ": this casckpt runs " + companionBin + " for " + args[0] + ", and it is missing"; r.code != exitFailed || !strings.Contains(msg, want) || !strings.Contains(msg, "reinstall casckpt") || strings.Contains(msg, "\n") {
			t.Fatalf("%s without the companion: exit %d, %q (want %q)", args[0], r.code, r.out, want)
		}
	}

	// A lean casckpt copied over the companion refuses, where it would
	// run itself again without end.
	leanBytes, err := os.ReadFile(lean)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(companionBin, leanBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	r := local.runCmd(local.commandContext(ctx, "status", "--json"))
	msg, _ := jsonOf[map[string]any](t, r.out)["error"].(string)
	if want := "status: this casckpt, run as " + companionBin + " by a lean casckpt for status, is lean itself"; r.code != exitFailed || !strings.Contains(msg, want) {
		t.Fatalf("status with a lean companion: exit %d, %q (want %q)", r.code, r.out, want)
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
