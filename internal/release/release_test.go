package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// host is the target of this machine, which the tests release for.
var host = target{runtime.GOOS, runtime.GOARCH}

// released is the release for host that the tests share: made once, by
// the first test that needs it, and removed by TestMain.
var released struct {
	once sync.Once
	tmp  string
	r    result
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if released.tmp != "" {
		os.RemoveAll(released.tmp)
	}
	os.Exit(code)
}

// release returns the output directory of the release for host and what
// it reported.
func release(t *testing.T) (string, result) {
	t.Helper()
	if !slices.Contains(allTargets, host) {
		t.Skipf("%s is not a release target", host)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not on PATH: a release compiles the TypeScript client, its npm package casckpt")
	}
	released.once.Do(func() {
		if released.tmp, released.err = os.MkdirTemp("", "casckpt-release-test-"); released.err != nil {
			return
		}
		var log bytes.Buffer
		cfg := config{root: repoRoot, out: filepath.Join(released.tmp, "dist"), targets: []target{host}, log: &log}
		released.r, released.err = run(context.Background(), cfg)
	})
	if released.err != nil {
		t.Fatalf("release for %s: %v", host, released.err)
	}
	return filepath.Join(released.tmp, "dist"), released.r
}

// TestArchiveReportsVersionAndCommit unpacks the host's archive: the
// binary and its companion, README.md and the licences, both binaries
// reporting VERSION and the commit git names; the binary links no S3
// client, the companion does.
func TestArchiveReportsVersionAndCommit(t *testing.T) {
	dist, r := release(t)
	version := strings.TrimSpace(string(readFile(t, filepath.Join(repoRoot, "VERSION"))))
	head := gitOut(t, "rev-parse", "HEAD")
	name := host.archiveName(version)
	dir := t.TempDir()
	files := unpack(t, filepath.Join(dist, name+map[bool]string{true: ".zip", false: ".tar.gz"}[host.goos == "windows"]), dir)
	want := []string{name + "/LICENSE", name + "/LICENSE.textdiff", name + "/README.md", name + "/" + host.exe(), name + "/" + host.companionExe()}
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Fatalf("archive holds %v, want %v", files, want)
	}
	for file, src := range map[string]string{"LICENSE": "LICENSE", "LICENSE.textdiff": "internal/textdiff/LICENSE", "README.md": "README.md"} {
		if !bytes.Equal(readFile(t, filepath.Join(dir, name, file)), readFile(t, filepath.Join(repoRoot, src))) {
			t.Errorf("%s is not the repository's %s", file, src)
		}
	}
	for exe, s3 := range map[string]bool{host.exe(): false, host.companionExe(): true} {
		bin := filepath.Join(dir, name, exe)
		out, err := exec.Command(bin, "version", "--json").Output()
		if err != nil {
			t.Fatalf("%s version --json: %v", exe, err)
		}
		var v map[string]string
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s version --json: %v: %s", exe, err, out)
		}
		if v["version"] != version || strings.TrimSuffix(v["commit"], "-dirty") != head || v["commit"] != r.commit {
			t.Fatalf("%s version --json: %s, want version %s and commit %s (the release said %s)", exe, out, version, head, r.commit)
		}
		mods, err := exec.Command("go", "version", "-m", bin).Output()
		if err != nil || strings.Contains(string(mods), "github.com/minio/minio-go") != s3 {
			t.Errorf("%s links the S3 client: %v, want %v (%v)", exe, !s3, s3, err)
		}
	}
}

// TestSHA256SUMSVerify checks SHA256SUMS: a line for every other file of
// the release, each sum right, and sha256sum -c agreeing.
func TestSHA256SUMSVerify(t *testing.T) {
	dist, r := release(t)
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != sumsName {
			names = append(names, e.Name())
		}
	}
	var listed []string
	for line := range strings.Lines(string(readFile(t, filepath.Join(dist, sumsName)))) {
		sum, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not HEX  NAME", line)
		}
		got := sha256.Sum256(readFile(t, filepath.Join(dist, name)))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("SHA256SUMS says %s for %s, it is %x", sum, name, got)
		}
		listed = append(listed, name)
	}
	if !slices.Equal(listed, names) || len(r.files) != len(names)+1 {
		t.Fatalf("SHA256SUMS lists %v, the release wrote %v (it said %v)", listed, names, r.files)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		c := exec.Command("sha256sum", "--check", "--strict", sumsName)
		c.Dir = dist
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum --check: %v\n%s", err, out)
		}
	}
}

// TestBuildFailureStopsTheRelease releases a repository whose command
// does not compile: the error is one line naming the target and the
// compiler's first error, the compiler's output goes to the log, and the
// output directory stays empty.
func TestBuildFailureStopsTheRelease(t *testing.T) {
	root := t.TempDir()
	writeTestFile(t, filepath.Join(root, "go.mod"), "module broken\n\ngo 1.26\n")
	writeTestFile(t, filepath.Join(root, "cmd", "casckpt", "main.go"), "package main\n\nfunc main() { notDefined() }\n")
	writeTestFile(t, filepath.Join(root, "VERSION"), string(readFile(t, filepath.Join(repoRoot, "VERSION"))))
	writeTestFile(t, filepath.Join(root, npmDir, "package.json"), string(readFile(t, filepath.Join(repoRoot, npmDir, "package.json"))))
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "broken"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out := filepath.Join(t.TempDir(), "dist")
	var log bytes.Buffer
	_, err := run(context.Background(), config{root: root, out: out, targets: []target{{"linux", "arm64"}}, log: &log})
	if err == nil {
		t.Fatal("a broken command was released")
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "linux/arm64 does not build: ") || !strings.Contains(msg, "undefined: notDefined") {
		t.Fatalf("error %q: want one line naming linux/arm64 and the compiler's error", msg)
	}
	if !strings.Contains(log.String(), "undefined: notDefined") {
		t.Fatalf("the log lacks the compiler's output: %q", log.String())
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Fatalf("the output directory after a failed build: %v, %v; want it empty", entries, err)
	}
}

// TestNpmManifestInStep: the npm main package's version must be
// VERSION's, and the package.json it is published with depends on one
// platform package per target at that version, names the casckpt
// command, and has no scripts (they build from source).
func TestNpmManifestInStep(t *testing.T) {
	if err := checkNpmVersion("1.2.3", "1.2.3"); err != nil {
		t.Fatalf("in step: %v", err)
	}
	if err := checkNpmVersion("1.2.2", "1.2.3"); err == nil || !strings.Contains(err.Error(), `version "1.2.2", but VERSION says "1.2.3"`) {
		t.Fatalf("an old version: %v", err)
	}
	version := strings.TrimSpace(string(readFile(t, filepath.Join(repoRoot, "VERSION"))))
	m, err := readNpmManifest(repoRoot, version)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.published()
	if err != nil {
		t.Fatal(err)
	}
	var pub struct {
		Name, Version, Type  string
		Bin                  map[string]string
		OptionalDependencies map[string]string
		Scripts              map[string]string
	}
	if err := json.Unmarshal(raw, &pub); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	deps := map[string]string{}
	for _, tg := range allTargets {
		deps[tg.npmPackage()] = version
	}
	if pub.Name != "casckpt" || pub.Version != version || pub.Type != "module" || !maps.Equal(pub.Bin, map[string]string{"casckpt": npmBin}) ||
		!maps.Equal(pub.OptionalDependencies, deps) || pub.Scripts != nil {
		t.Fatalf("the published package.json:\n%s\nwant casckpt %s, an ES module, bin casckpt %s, optionalDependencies %v, no scripts", raw, version, npmBin, deps)
	}
	// The client's fields keep their order and values ("exports"
	// conditions are read in order), then the two the release adds.
	fields, err := readFields(raw)
	if err != nil {
		t.Fatal(err)
	}
	var want []npmField
	for _, f := range m.fields {
		if f.key != "scripts" {
			want = append(want, f)
		}
	}
	if len(fields) != len(want)+2 || fields[len(want)].key != "bin" || fields[len(want)+1].key != "optionalDependencies" {
		t.Fatalf("the published package.json has fields %v, want the client's %v then bin and optionalDependencies", fields, want)
	}
	for i, f := range want {
		var a, b bytes.Buffer
		if json.Compact(&a, f.value) != nil || json.Compact(&b, fields[i].value) != nil || f.key != fields[i].key || a.String() != b.String() {
			t.Errorf("published field %d: %s %s, the client's %s %s", i, fields[i].key, fields[i].value, f.key, f.value)
		}
	}
}

// TestRefusesWhatIsNotARelease: an unknown target and an output
// directory with files in it are refused before anything is built.
func TestRefusesWhatIsNotARelease(t *testing.T) {
	if _, err := parseTargets("linux/amd64,plan9/386"); err == nil || !strings.Contains(err.Error(), `"plan9/386" is not one of`) {
		t.Fatalf("plan9/386: %v", err)
	}
	if ts, err := parseTargets(strings.Join(targetNames(allTargets), ",")); err != nil || !slices.Equal(ts, allTargets) {
		t.Fatalf("every target: %v, %v", ts, err)
	}
	out := t.TempDir()
	writeTestFile(t, filepath.Join(out, "old.tar.gz"), "old")
	_, err := run(context.Background(), config{root: repoRoot, out: out, targets: []target{host}, log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("a release into a directory with files: %v", err)
	}
}

// TestTargetNames pins each target's names: the archive, the wheel's
// platform tag and the npm platform package.
func TestTargetNames(t *testing.T) {
	want := map[target][3]string{
		{"linux", "amd64"}:   {"casckpt_1.2.3_linux_amd64", "manylinux_2_17_x86_64", "@casckpt/linux-x64"},
		{"linux", "arm64"}:   {"casckpt_1.2.3_linux_arm64", "manylinux_2_17_aarch64", "@casckpt/linux-arm64"},
		{"darwin", "amd64"}:  {"casckpt_1.2.3_darwin_amd64", "macosx_12_0_x86_64", "@casckpt/darwin-x64"},
		{"darwin", "arm64"}:  {"casckpt_1.2.3_darwin_arm64", "macosx_12_0_arm64", "@casckpt/darwin-arm64"},
		{"windows", "amd64"}: {"casckpt_1.2.3_windows_amd64", "win_amd64", "@casckpt/win32-x64"},
		{"windows", "arm64"}: {"casckpt_1.2.3_windows_arm64", "win_arm64", "@casckpt/win32-arm64"},
	}
	if len(want) != len(allTargets) {
		t.Fatalf("%d targets, %d pinned", len(allTargets), len(want))
	}
	for _, tg := range allTargets {
		if got := [3]string{tg.archiveName("1.2.3"), tg.wheelPlatform(), tg.npmPackage()}; got != want[tg] {
			t.Errorf("%s: %q, want %q", tg, got, want[tg])
		}
	}
}

// unpack extracts the archive at path (.tar.gz, or .zip or .whl) into dir and
// returns the names it holds, sorted; a binary must be executable.
func unpack(t *testing.T, path, dir string) []string {
	t.Helper()
	var names []string
	put := func(name string, mode os.FileMode, r io.Reader) {
		if base := filepath.Base(name); (base == "casckpt" || base == "casckpt.exe") && mode&0o111 == 0 {
			t.Errorf("%s: mode %v, not executable", name, mode)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, mode.Perm()); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if strings.HasSuffix(path, ".zip") || strings.HasSuffix(path, ".whl") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			put(f.Name, f.Mode(), rc)
			rc.Close()
		}
	} else {
		untar(t, path, put)
	}
	slices.Sort(names)
	return names
}

// untar calls put for each file of the gzipped tar file at path.
func untar(t *testing.T, path string, put func(string, os.FileMode, io.Reader)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		put(h.Name, os.FileMode(h.Mode), tr)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gitOut runs git in the repository and returns its output, trimmed.
func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", repoRoot}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestPackEveryTarget packs a stand-in binary for each of the six
// targets (whatever builds here): the archive (a zip with casckpt.exe for
// windows), the wheel with its platform tag and the binary inside, and
// the npm platform package with its os, cpu and binary.
func TestPackEveryTarget(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the wheels cannot be built")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(readFile(t, filepath.Join(root, "VERSION")))) // the wheel's
	out := t.TempDir()
	for _, tg := range allTargets {
		stand := t.TempDir()
		bin := binaries{main: filepath.Join(stand, tg.exe()), companion: filepath.Join(stand, tg.companionExe())}
		writeTestFile(t, bin.main, "stand-in for "+tg.String())
		writeTestFile(t, bin.companion, "companion for "+tg.String())
		files, err := pack(context.Background(), config{root: root, out: out}, tg, version, bin)
		if err != nil {
			t.Fatalf("%s: %v", tg, err)
		}
		ext := map[bool]string{true: ".zip", false: ".tar.gz"}[tg.goos == "windows"]
		want := []string{tg.archiveName(version) + ext, "casckpt-" + version + "-py3-none-" + tg.wheelPlatform() + ".whl", npmTarball(tg.npmPackage(), version)}
		if !slices.Equal(files, want) {
			t.Fatalf("%s: wrote %v, want %v", tg, files, want)
		}
		dir := t.TempDir()
		names := unpack(t, filepath.Join(out, files[0]), dir)
		if !slices.Contains(names, tg.archiveName(version)+"/"+tg.exe()) || !slices.Contains(names, tg.archiveName(version)+"/"+tg.companionExe()) {
			t.Errorf("%s: the archive holds %v, not both %s and %s", tg, names, tg.exe(), tg.companionExe())
		}
		wheel := unpack(t, filepath.Join(out, files[1]), dir)
		if got := readFile(t, filepath.Join(dir, "casckpt", "_bin", tg.exe())); string(got) != "stand-in for "+tg.String() {
			t.Errorf("%s: the wheel (%v) carries %q as casckpt/_bin/%s", tg, wheel, got, tg.exe())
		}
		if got := readFile(t, filepath.Join(dir, "casckpt", "_bin", tg.companionExe())); string(got) != "companion for "+tg.String() {
			t.Errorf("%s: the wheel (%v) carries %q as casckpt/_bin/%s", tg, wheel, got, tg.companionExe())
		}
		companionSeen := false
		untar(t, filepath.Join(out, files[2]), func(name string, mode os.FileMode, r io.Reader) {
			data, _ := io.ReadAll(r)
			switch name {
			case "package/package.json":
				var m struct {
					Name    string
					OS, CPU []string
				}
				if err := json.Unmarshal(data, &m); err != nil || m.Name != tg.npmPackage() || !slices.Equal(m.OS, []string{tg.npmOS()}) || !slices.Equal(m.CPU, []string{tg.npmCPU()}) {
					t.Errorf("%s: npm package.json %s (%v)", tg, data, err)
				}
			case "package/bin/" + tg.exe():
				if string(data) != "stand-in for "+tg.String() || mode&0o111 == 0 {
					t.Errorf("%s: npm bin/%s: %q, mode %v", tg, tg.exe(), data, mode)
				}
			case "package/bin/" + tg.companionExe():
				companionSeen = true
				if string(data) != "companion for "+tg.String() || mode&0o111 == 0 {
					t.Errorf("%s: npm bin/%s: %q, mode %v", tg, tg.companionExe(), data, mode)
				}
			}
		})
		if !companionSeen {
			t.Errorf("%s: the npm package has no bin/%s", tg, tg.companionExe())
		}
	}
}
