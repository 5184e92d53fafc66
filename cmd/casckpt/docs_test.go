package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commandsDoc is the command reference the commands' --help must match.
const commandsDoc = "../../docs/commands.md"

// TestCommandsDocMatchesHelp checks docs/commands.md against the built
// binary's --help: every command (and subcommand) has a "### `COMMAND
// ...`" heading, the heading's synopsis names each of the command's flags
// (its long name or its shorthand), and names no flag the command lacks.
// Each failure says which command and flag, and what to change where.
func TestCommandsDocMatchesHelp(t *testing.T) {
	b := newBinEnv(t)
	doc, err := os.ReadFile(commandsDoc)
	if err != nil {
		t.Fatal(err)
	}
	documented := synopsesOf(string(doc))
	commands := helpCommands(b, nil)
	if len(commands) < 20 {
		t.Fatalf("casckpt --help lists %d commands: %v", len(commands), commands)
	}
	for _, name := range commands {
		flags := helpFlags(b.ok(append(strings.Fields(name), "--help")...).out)
		docFlags, ok := documented[name]
		if !ok {
			t.Errorf("casckpt %s is not in docs/commands.md: add a heading \"### `%s ...`\" with its flags %q", name, name, longNames(flags))
			continue
		}
		for _, f := range flags {
			if !slices.Contains(docFlags, f.long) && (f.short == "" || !slices.Contains(docFlags, f.short)) {
				t.Errorf("casckpt %s --help has %s (%s), which the heading of %s in docs/commands.md lacks: add [%s ...] to \"### `%s ...`\"", name, f.long, f.usage, name, f.long, name)
			}
		}
		for _, d := range docFlags {
			if d == "--json" {
				continue // a global flag, named where a command prints JSON
			}
			if !slices.ContainsFunc(flags, func(f helpFlag) bool { return f.long == d || f.short == d }) {
				t.Errorf("docs/commands.md's heading of %s names %s, which casckpt %s --help lacks: drop it from \"### `%s ...`\" or build it", name, d, name, name)
			}
		}
	}
	for name := range documented {
		if !slices.Contains(commands, name) {
			t.Errorf("docs/commands.md has a heading for %q, which casckpt --help does not list", name)
		}
	}
}

// helpCommands lists the commands that casckpt [parent...] --help shows,
// a command that has subcommands by its subcommands (hook by hook
// claude-code), as space-separated paths; help is left out.
func helpCommands(b *binEnv, parent []string) []string {
	var out []string
	in := false
	for line := range strings.Lines(b.ok(append(parent, "--help")...).out) {
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			name := strings.Fields(line)[0]
			if name == "help" || name == "completion" {
				continue
			}
			path := append(slices.Clone(parent), name)
			sub := helpCommands(b, path)
			if len(sub) == 0 {
				sub = []string{strings.Join(path, " ")}
			}
			out = append(out, sub...)
		}
	}
	return out
}

// helpFlag is one flag of a command's --help.
type helpFlag struct{ long, short, usage string }

func longNames(flags []helpFlag) []string {
	var out []string
	for _, f := range flags {
		out = append(out, f.long)
	}
	return out
}

// helpFlagLine is a line of a --help's "Flags:": "  -m, --message string   why ...".
var helpFlagLine = regexp.MustCompile(`^\s+(?:(-\w), )?(--[\w-]+)(?: \S+)?\s{2,}(.*)$`)

// helpFlags are the flags in the "Flags:" part of a --help (not the
// global ones), --help itself left out.
func helpFlags(help string) []helpFlag {
	var out []helpFlag
	in := false
	for line := range strings.Lines(help) {
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "Flags:":
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			if m := helpFlagLine.FindStringSubmatch(line); m != nil && m[2] != "--help" {
				out = append(out, helpFlag{long: m[2], short: m[1], usage: m[3]})
			}
		}
	}
	return out
}

var (
	headingCode = regexp.MustCompile("`([^`]+)`")
	synopsisArg = regexp.MustCompile(`(?:^|[\s\[|])(--?[A-Za-z][\w-]*)`)
	commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// synopsesOf maps each command that a "### " heading of the doc names to
// the flags its synopses there name: "### `cat [DIR] SNAP PATH` and `ls
// [DIR] SNAP [--json]`" documents cat with none and ls with --json.
func synopsesOf(doc string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(line, "### ") {
			continue
		}
		for _, m := range headingCode.FindAllStringSubmatch(line, -1) {
			words := strings.Fields(m[1])
			n := 0
			for n < len(words) && commandWord.MatchString(words[n]) {
				n++
			}
			if n == 0 {
				continue // `--version`: a flag of the root command
			}
			name := strings.Join(words[:n], " ")
			flags := out[name]
			for _, f := range synopsisArg.FindAllStringSubmatch(strings.Join(words[n:], " "), -1) {
				if !slices.Contains(flags, f[1]) {
					flags = append(flags, f[1])
				}
			}
			out[name] = flags
		}
	}
	return out
}
