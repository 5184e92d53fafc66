package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/term"
)

// ANSI colours, as git uses them in diffs.
const (
	ansiReset = "\033[m"
	ansiBold  = "\033[1m"
	ansiRed   = "\033[31m"
	ansiGreen = "\033[32m"
	ansiCyan  = "\033[36m"
)

// useColour decides whether output for people is coloured, as git does:
// --color=always or never decide; auto (the default) colours a terminal
// unless NO_COLOR is set (to anything) or TERM is dumb.
func useColour(mode string, env func(string) string, terminal bool) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return terminal && env("NO_COLOR") == "" && env("TERM") != "dumb"
}

// stdoutTerminal reports whether stdout is a terminal.
func (g *globals) stdoutTerminal() bool {
	f, ok := g.io.out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colour reports whether this run colours its output (never its JSON).
func (g *globals) colour() bool {
	return !g.json && useColour(g.color, g.env, g.stdoutTerminal())
}

// paint wraps s in colour c when the run colours its output.
func (g *globals) paint(c, s string) string {
	if !g.colour() {
		return s
	}
	return c + s + ansiReset
}

// colourPatch writes patch, a unified diff, to w with git's colours:
// headers bold, hunk lines cyan, insertions green, deletions red.
func colourPatch(w io.Writer, patch string) {
	for line := range strings.Lines(patch) {
		body, nl := strings.CutSuffix(line, "\n")
		c := ""
		switch {
		case strings.HasPrefix(body, "diff "), strings.HasPrefix(body, "+++ "), strings.HasPrefix(body, "--- "),
			strings.HasPrefix(body, "new file"), strings.HasPrefix(body, "deleted file"), strings.HasPrefix(body, "old mode"),
			strings.HasPrefix(body, "new mode"), strings.HasPrefix(body, "index "), strings.HasPrefix(body, "Binary files"):
			c = ansiBold
		case strings.HasPrefix(body, "@@"):
			c = ansiCyan
		case strings.HasPrefix(body, "+"):
			c = ansiGreen
		case strings.HasPrefix(body, "-"):
			c = ansiRed
		}
		if c != "" && body != "" {
			body = c + body + ansiReset
		}
		io.WriteString(w, body)
		if nl {
			io.WriteString(w, "\n")
		}
	}
}

// pagerCommand is the pager, as git finds it: $CASCKPT_PAGER, else $PAGER,
// else less -FRX (which quits at once when the text fits on one screen);
// "" means none, which "cat" asks for.
func pagerCommand(env func(string) string) string {
	for _, v := range []string{"CASCKPT_PAGER", "PAGER"} {
		if p := strings.TrimSpace(env(v)); p == "cat" {
			return ""
		} else if p != "" {
			return p
		}
	}
	return "less -FRX"
}

// withPager runs write with its output sent through the pager when stdout
// is a terminal (never for JSON), as git pages a diff; otherwise, or when
// the pager cannot be started, straight to stdout. LESS defaults to FRX,
// as git sets it.
func (g *globals) withPager(write func(w io.Writer)) {
	pager := pagerCommand(g.env)
	if g.json || pager == "" || !g.stdoutTerminal() {
		write(g.io.out)
		return
	}
	c := exec.Command("/bin/sh", "-c", pager)
	c.Stdout, c.Stderr = g.io.out, g.io.err
	c.Env = os.Environ()
	if g.env("LESS") == "" {
		c.Env = append(c.Env, "LESS=FRX")
	}
	in, err := c.StdinPipe()
	if err == nil {
		err = c.Start()
	}
	if err != nil {
		write(g.io.out)
		return
	}
	bw := bufio.NewWriter(in)
	write(bw)
	bw.Flush() // a pager quit early (q in less) is no failure: EPIPE ends the write
	in.Close()
	_ = c.Wait()
}
