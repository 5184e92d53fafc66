package main

import (
	"fmt"
	"slices"
	"strings"
)

// A target is one platform casckpt is released for.
type target struct{ goos, goarch string }

// allTargets are the platforms of a release.
var allTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// String is the target as GOOS/GOARCH.
func (t target) String() string { return t.goos + "/" + t.goarch }

// exe is the binary's file name on the target.
func (t target) exe() string {
	if t.goos == "windows" {
		return "casckpt.exe"
	}
	return "casckpt"
}

// archiveName is the name of the target's archive, without its extension.
// companionExe is the file name of t's companion: the whole build, which
// the release's lean casckpt runs for what it leaves out (see
// cmd/casckpt's handoff.go).
func (t target) companionExe() string {
	if t.goos == "windows" {
		return "casckpt-full.exe"
	}
	return "casckpt-full"
}

func (t target) archiveName(version string) string {
	return fmt.Sprintf("casckpt_%s_%s_%s", version, t.goos, t.goarch)
}

// wheelPlatform is the target's wheel platform tag: manylinux_2_17 for
// Linux (the binary is static: any glibc does), macOS 12 for both macOS
// arches (Go 1.26's linker marks its binaries for macOS 12.0 and later:
// cmd/link/internal/ld/macho.go), win_* for Windows.
func (t target) wheelPlatform() string {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[t.goarch]
	switch t.goos {
	case "linux":
		return "manylinux_2_17_" + arch
	case "darwin":
		return "macosx_12_0_" + map[string]string{"amd64": "x86_64", "arm64": "arm64"}[t.goarch]
	default:
		return "win_" + t.goarch
	}
}

// npmOS and npmCPU are the target as Node names it (process.platform,
// process.arch): the platform package's os and cpu.
func (t target) npmOS() string {
	if t.goos == "windows" {
		return "win32"
	}
	return t.goos
}

func (t target) npmCPU() string {
	if t.goarch == "amd64" {
		return "x64"
	}
	return t.goarch
}

// npmPackage is the name of the target's npm platform package.
func (t target) npmPackage() string { return "@casckpt/" + t.npmOS() + "-" + t.npmCPU() }

// targetNames are the targets as GOOS/GOARCH.
func targetNames(ts []target) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.String())
	}
	return names
}

// parseTargets reads a comma-separated list of GOOS/GOARCH, each one of
// allTargets.
func parseTargets(s string) ([]target, error) {
	var ts []target
	for _, name := range strings.Split(s, ",") {
		i := slices.IndexFunc(allTargets, func(t target) bool { return t.String() == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("-targets: %q is not one of %s", name, strings.Join(targetNames(allTargets), ", "))
		}
		if !slices.Contains(ts, allTargets[i]) {
			ts = append(ts, allTargets[i])
		}
	}
	return ts, nil
}
