package scan

import (
	"path"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"
)

// DefaultExcludes is the contract's list of paths not captured by default.
// Patterns ending in '/' match directories only; the others match any
// entry by name. A .gitignore negation that matches a path ("!build/")
// overrides the list for it, and so does the project's git index when it
// tracks the path (a file, or a file below a directory).
var DefaultExcludes = []string{
	"node_modules/", "dist/", "build/", "target/", "out/", ".next/", ".nuxt/",
	"__pycache__/", "*.pyc", "*.pyo", ".cache/", ".pytest_cache/", ".mypy_cache/",
	".ruff_cache/", "coverage/", ".coverage", ".venv/", "venv/", "env/", ".git/",
	".hg/", ".svn/", ".worktrees/", "*.so", "*.dylib", "*.dll", "*.o", "*.a",
	"*.jar", "*.class", "*.exe", "*.obj", "*.mp4", "*.mov", "*.mkv", "*.webm",
	"*.zip", "*.tar", "*.tar.gz", "*.tgz", "*.7z", "*.rar", "*.iso", ".env",
	".env.*", ".DS_Store", "Thumbs.db", "*.log",
}

// defaultMatcher answers the default list by name without regular
// expressions: it runs for every entry of every scan.
type defaultMatcher struct {
	dirNames  map[string]bool
	names     map[string]bool
	suffixes  []string // from "*.ext" patterns
	otherGlob []string // anything else, for path.Match
}

var defaults = func() defaultMatcher {
	m := defaultMatcher{dirNames: map[string]bool{}, names: map[string]bool{}}
	for _, p := range DefaultExcludes {
		switch {
		case strings.HasSuffix(p, "/"):
			m.dirNames[strings.TrimSuffix(p, "/")] = true
		case strings.HasPrefix(p, "*.") && !strings.ContainsAny(p[2:], "*?["):
			m.suffixes = append(m.suffixes, p[1:])
		case !strings.ContainsAny(p, "*?["):
			m.names[p] = true
		default:
			m.otherGlob = append(m.otherGlob, p)
		}
	}
	return m
}()

func (m defaultMatcher) excluded(name string, isDir bool) bool {
	if name == ".git" || (isDir && m.dirNames[name]) || m.names[name] {
		return true
	}
	for _, s := range m.suffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	for _, g := range m.otherGlob {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// ignoreRule is one pattern line of a .gitignore file.
type ignoreRule struct {
	match  *ignore.GitIgnore
	negate bool
}

// ignoreFile is the rules of one .gitignore, linked to those of the
// directories above it.
type ignoreFile struct {
	parent *ignoreFile
	base   string // directory of the .gitignore, relative to the scan root ("" at the root)
	rules  []ignoreRule
}

// parseIgnore compiles the lines of a .gitignore in directory base. Each line
// is compiled on its own so that a negation is seen even where no earlier
// line of the same file matched (go-gitignore only reports positive matches);
// git's rule that a slash at the start or in the middle anchors a pattern to
// its directory is applied here, as go-gitignore anchors only a leading '/'.
func parseIgnore(parent *ignoreFile, base string, content []byte) *ignoreFile {
	f := &ignoreFile{parent: parent, base: base}
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		if negate {
			line = line[1:]
		}
		body := strings.TrimSuffix(strings.TrimRight(line, " "), "/")
		if strings.Contains(body, "/") && !strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "**/") {
			line = "/" + line
		}
		f.rules = append(f.rules, ignoreRule{match: ignore.CompileIgnoreLines(line), negate: negate})
	}
	if len(f.rules) == 0 {
		return parent
	}
	return f
}

// ignoreMatch is what the .gitignore files say of a path.
type ignoreMatch uint8

const (
	noMatch ignoreMatch = iota // no line matches it
	ignored                    // the last line that matches ignores it
	negated                    // the last line that matches is a negation ("!build/")
)

// match tells what the .gitignore files in effect say of rel (a path
// relative to the scan root). As in git, deeper files take precedence over
// shallower ones and, within a file, the last matching line wins.
func (f *ignoreFile) match(rel string, isDir bool) ignoreMatch {
	var chain []*ignoreFile
	for g := f; g != nil; g = g.parent {
		chain = append(chain, g)
	}
	result := noMatch
	for i := len(chain) - 1; i >= 0; i-- {
		g := chain[i]
		sub := rel
		if g.base != "" {
			sub = strings.TrimPrefix(rel, g.base+"/")
		}
		if isDir {
			sub += "/"
		}
		for _, r := range g.rules {
			if r.match.MatchesPath(sub) {
				result = ignored
				if r.negate {
					result = negated
				}
			}
		}
	}
	return result
}
