package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/internal/s3test"
)

// TestWheelInstallsOfflineInFreshVenv installs the host's wheel with pip
// into a fresh venv, offline: its casckpt command snapshots and restores
// a directory and exits as the binary does, and the Python client runs
// the binary the wheel carries; a store in a bucket works through the
// companion the wheel carries beside it.
func TestWheelInstallsOfflineInFreshVenv(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the venv's layout (bin/) is the POSIX one")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the wheel cannot be installed")
	}
	dist, r := release(t)
	env := isolatedEnv(t)
	venv := newVenv(t, env, py)
	wheel := filepath.Join(dist, "casckpt-"+r.version+"-py3-none-"+host.wheelPlatform()+".whl")
	runIn(t, "", env, filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check", wheel)

	snapshotAndRestore(t, env, filepath.Join(venv, "bin", "casckpt"))
	failsAsCasckpt(t, "", env, filepath.Join(venv, "bin", "casckpt"))

	// The client, with no casckpt on PATH nor $CASCKPT_BIN, finds the
	// bundled binary and snapshots through it.
	proj, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	writeTestFile(t, filepath.Join(proj, "go.mod"), "module x\n")
	const script = `import sys
from casckpt import CheckpointManager
from casckpt.manager import _find_binary
cm = CheckpointManager(enabled=True, checkpoint_base=sys.argv[2])
cm.new_turn()
assert cm.ensure_checkpoint(sys.argv[1], "from python"), "no checkpoint"
print(_find_binary(None), len(cm.list_checkpoints(sys.argv[1])))`
	out := runIn(t, "", env, filepath.Join(venv, "bin", "python"), "-c", script, proj, store)
	bin, n, _ := strings.Cut(strings.TrimSpace(out), " ")
	if !strings.HasPrefix(bin, venv+"/") || !strings.HasSuffix(bin, "/site-packages/casckpt/_bin/casckpt") || n != "1" {
		t.Fatalf("the client ran %q and listed %s checkpoints; want the wheel's binary in %s and 1", bin, n, venv)
	}
	restoresInBucket(t, env, filepath.Join(venv, "bin", "casckpt"))
}

// TestNpmInstallsOfflineInFreshProject installs the npm main package (the
// TypeScript client) and the host's platform package from their tarballs
// into a fresh project, offline, with an empty cache: npx casckpt reports
// the release's version, snapshots and restores a directory and passes the
// binary's exit status on; and a Node script that imports the client, with
// no $CASCKPT_BIN, snapshots and lists through the platform package's
// binary; a store in a bucket works through the companion beside it.
func TestNpmInstallsOfflineInFreshProject(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("npm and npx are .cmd scripts there")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not on PATH: the npm packages cannot be installed")
	}
	dist, r := release(t)
	proj := t.TempDir()
	env := append(isolatedEnv(t), "npm_config_cache="+filepath.Join(t.TempDir(), "npm-cache"),
		"npm_config_update_notifier=false", "npm_config_audit=false", "npm_config_fund=false")
	writeTestFile(t, filepath.Join(proj, "package.json"), `{"name": "fresh", "version": "1.0.0", "private": true}`+"\n")
	runIn(t, proj, env, npm, "install", "--offline",
		filepath.Join(dist, npmTarball("casckpt", r.version)), filepath.Join(dist, npmTarball(host.npmPackage(), r.version)))

	npx := filepath.Join(filepath.Dir(npm), "npx")
	snapshotAndRestore(t, env, npx, "--offline", "--prefix", proj, "casckpt")

	failsAsCasckpt(t, proj, env, npx, "--offline", "casckpt")
	got := runIn(t, proj, env, npx, "--offline", "casckpt", "--version")
	if want := fmt.Sprintf("casckpt %s (commit %s, ", r.version, r.commit); !strings.HasPrefix(got, want) {
		t.Fatalf("npx casckpt --version: %q, want it to start %q", got, want)
	}
	importsClient(t, proj, env)
	typeChecks(t, proj, env)
	restoresInBucket(t, env, npx, "--offline", "--prefix", proj, "casckpt")
}

// typeChecks compiles a TypeScript file in the project proj that imports
// the installed client, with the client's own compiler (which the release
// installed): the package's declarations resolve through its exports, so
// a document's field has its type (a wrong one is an error).
func typeChecks(t *testing.T, proj string, env []string) {
	t.Helper()
	writeTestFile(t, filepath.Join(proj, "tsconfig.json"), `{"compilerOptions": {"module": "nodenext", "moduleResolution": "nodenext",
  "strict": true, "noEmit": true, "types": [], "skipLibCheck": true}, "files": ["check.ts"]}`+"\n")
	writeTestFile(t, filepath.Join(proj, "check.ts"), `import { CasckptError, snapshot, type Snapshot } from "casckpt";
export const s: Promise<Snapshot> = snapshot(".");
export const files = (s: Snapshot): number => s.files;
// @ts-expect-error: files is a number
export const wrong = (s: Snapshot): string => s.files;
export const exit = (e: CasckptError): number => e.exit;
`)
	tsc, err := filepath.Abs(filepath.Join(repoRoot, npmDir, "node_modules", "typescript", "bin", "tsc"))
	if err != nil {
		t.Fatal(err)
	}
	runIn(t, proj, env, "node", tsc, "-p", "tsconfig.json")
}

// importsClient runs a Node script in the project proj that imports the
// installed casckpt client, snapshots a directory with the plain function
// and lists it: the binary it finds, with env's PATH and no
// $CASCKPT_BIN, is the platform package's, and the listing holds the
// snapshot.
func importsClient(t *testing.T, proj string, env []string) {
	t.Helper()
	dir, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "from node\n")
	const script = `import { binaryPath, findBinary, list, snapshot } from "casckpt";
const [dir, store] = process.argv.slice(1);
const s = await snapshot(dir, { store, message: "from node" });
const l = await list(dir, { store });
console.log(JSON.stringify({ found: findBinary(), binaryPath: binaryPath(), created: s.created, listed: l.map((e) => e.id), id: s.id }));`
	out := runIn(t, proj, env, "node", "--input-type=module", "-e", script, dir, store)
	var got struct {
		Found, BinaryPath, ID string
		Created               bool
		Listed                []string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the Node script printed %q: %v", out, err)
	}
	want := filepath.Join(proj, "node_modules", host.npmPackage(), "bin", host.exe())
	if got.Found != want || got.BinaryPath != want || !got.Created || len(got.Listed) != 1 || got.Listed[0] != got.ID {
		t.Fatalf("the client found %q (binaryPath %q), snapshot created %v, list %v (snapshot %q); want %s, a snapshot listed",
			got.Found, got.BinaryPath, got.Created, got.Listed, got.ID, want)
	}
}

// snapshotAndRestore runs the casckpt command cmd (with its leading
// arguments) to snapshot a directory, changes the directory, restores the
// snapshot and checks the bytes on disk are the snapshot's again.
func snapshotAndRestore(t *testing.T, env []string, cmd ...string) {
	t.Helper()
	roundTrip(t, env, filepath.Join(t.TempDir(), "store"), cmd...)
}

// restoresInBucket is snapshotAndRestore with the store in a bucket of a
// real S3 server (versitygw; the test is skipped without it): the
// installed casckpt, lean, hands the commands to casckpt-full beside it,
// which the install must have put there.
func restoresInBucket(t *testing.T, env []string, cmd ...string) {
	t.Helper()
	srv := s3test.Start(t)
	env = append(append(env, srv.Env()...), "XDG_CACHE_HOME="+t.TempDir())
	roundTrip(t, env, "s3://"+srv.Bucket+"/installed", cmd...)
}

// roundTrip is snapshotAndRestore with the store at store; status, which
// the lean casckpt hands to casckpt-full beside it, follows.
func roundTrip(t *testing.T, env []string, store string, cmd ...string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module x\n", "a.txt": "one\n", "sub/b.bin": "\x00\x01\xff binary\n"}
	for name, data := range files {
		writeTestFile(t, filepath.Join(dir, name), data)
	}
	casckpt := func(args ...string) {
		runIn(t, dir, env, cmd[0], append(append(cmd[1:], "--store", store), args...)...)
	}
	casckpt("snapshot", dir, "-m", "first")
	writeTestFile(t, filepath.Join(dir, "a.txt"), "changed\n")
	writeTestFile(t, filepath.Join(dir, "c.txt"), "new\n")
	if err := os.Remove(filepath.Join(dir, "sub", "b.bin")); err != nil {
		t.Fatal(err)
	}
	casckpt("restore", dir, "@1")
	for name, data := range files {
		if got := readFile(t, filepath.Join(dir, name)); !bytes.Equal(got, []byte(data)) {
			t.Errorf("%s after restore: %q, want %q", name, got, data)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("c.txt, made after the snapshot, is still there after restoring it (%v)", err)
	}
	casckpt("status")
}

// newVenv makes a fresh venv, with pip, with the python3 at py.
func newVenv(t *testing.T, env []string, py string) string {
	t.Helper()
	venv := filepath.Join(t.TempDir(), "venv")
	c := exec.Command(py, "-m", "venv", venv)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v (without ensurepip, install it: Debian's python3-venv)\n%s", err, out)
	}
	return venv
}

// failsAsCasckpt runs the casckpt command cmd (with its leading
// arguments) in dir to restore a snapshot that is not there: it must exit
// 1 with casckpt's one "casckpt: " line, as the binary itself does.
func failsAsCasckpt(t *testing.T, dir string, env []string, cmd ...string) {
	t.Helper()
	c := exec.Command(cmd[0], append(cmd[1:], "--store", filepath.Join(t.TempDir(), "store"), "restore", t.TempDir(), "@99")...)
	c.Dir, c.Env = dir, env
	out, err := c.CombinedOutput()
	if c.ProcessState == nil {
		t.Fatalf("%s: %v", cmd[0], err)
	}
	if code := c.ProcessState.ExitCode(); code != 1 || !strings.HasPrefix(string(out), "casckpt: ") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("%v restore of a snapshot that is not there: exit %d (%v), %q; want exit 1 and casckpt's one line", cmd, code, err, out)
	}
}

// isolatedEnv is an environment with a fresh HOME, no casckpt store or
// binary named, no pip or npm settings, and a PATH of the system
// directories and node's, python3's and git's. (A casckpt on PATH does
// not count: the tests check which binary ran.)
func isolatedEnv(t *testing.T) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "PATH" && !strings.HasPrefix(k, "CASCKPT_") && !strings.HasPrefix(k, "npm_") &&
			!strings.HasPrefix(k, "PIP_") && k != "VIRTUAL_ENV" && k != "PYTHONPATH" && k != "XDG_DATA_HOME" {
			env = append(env, kv)
		}
	}
	path := []string{"/usr/local/bin", "/usr/bin", "/bin"}
	for _, tool := range []string{"node", "python3", "git"} {
		if p, err := exec.LookPath(tool); err == nil {
			path = append(path, filepath.Dir(p))
		}
	}
	return append(env, "HOME="+t.TempDir(), "PATH="+strings.Join(path, string(os.PathListSeparator)))
}

// runIn runs name with args in dir (the current directory when "") with
// env, fails the test when it fails, and returns its stdout.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// TestPipInstallsFromSourceOffline installs the Python client from its
// directory and from its sdist with pip, offline, in a fresh venv: the
// in-tree backend needs nothing fetched, the version is VERSION's, and a
// pure-Python install carries no binary and no casckpt command (which
// would find itself on PATH).
func TestPipInstallsFromSourceOffline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the venv's layout (bin/) is the POSIX one")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python client cannot be installed")
	}
	version := strings.TrimSpace(string(readFile(t, filepath.Join(repoRoot, "VERSION"))))
	src, err := filepath.Abs(filepath.Join(repoRoot, pyDir))
	if err != nil {
		t.Fatal(err)
	}
	env := append(isolatedEnv(t), "PYTHONDONTWRITEBYTECODE=1")
	venv := newVenv(t, env, py)
	sdists := t.TempDir()
	const buildSdist = `import sys; sys.path.insert(0, "_build"); import casckpt_build; print(casckpt_build.build_sdist(sys.argv[1]))`
	sdist := strings.TrimSpace(runIn(t, src, env, py, "-c", buildSdist, sdists))
	const check = `import importlib.metadata, casckpt._binary; print(importlib.metadata.version("casckpt"), casckpt._binary.bundled())`
	for _, from := range []string{src, filepath.Join(sdists, sdist)} {
		runIn(t, t.TempDir(), env, filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--no-cache-dir",
			"--disable-pip-version-check", "--force-reinstall", from)
		if got := strings.TrimSpace(runIn(t, t.TempDir(), env, filepath.Join(venv, "bin", "python"), "-c", check)); got != version+" None" {
			t.Errorf("installed from %s: version and bundled binary %q, want %q", from, got, version+" None")
		}
		if _, err := os.Lstat(filepath.Join(venv, "bin", "casckpt")); !os.IsNotExist(err) {
			t.Errorf("installed from %s: a casckpt command without a binary (%v)", from, err)
		}
	}
}
