package osfs

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// targets are the systems casckpt builds for (.ci/run cross-builds and
// vets each).
var targets = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
	{"freebsd", "amd64"},
}

// goFile is one parsed file of a package and the names it declares at the
// top level (a method as Type.Method).
type goFile struct {
	name     string
	test     bool
	declares []string
	ast      *ast.File
}

// TestEveryOSHalfHasItsCounterpart fails when a name that a file for one
// system declares (x_linux.go's openBeneath) is used by a file built for
// another target, where no file declares it: the other half of the pair
// (x_other.go, x_windows.go) is missing. It reads the sources only, so it
// runs in a moment; .ci/run also builds and vets every target.
func TestEveryOSHalfHasItsCounterpart(t *testing.T) {
	module := filepath.Join("..", "..")
	err := filepath.WalkDir(module, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != module && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			checkCounterparts(t, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkCounterparts checks the Go files of directory dir for each target.
func checkCounterparts(t *testing.T, dir string) {
	files := parseDir(t, dir)
	for _, tg := range targets {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = tg.goos, tg.goarch, false
		var built []goFile
		for _, f := range files {
			if ok, err := ctx.MatchFile(dir, f.name); err != nil {
				t.Fatal(err)
			} else if ok {
				built = append(built, f)
			}
		}
		declared := map[string]bool{}
		for _, f := range built {
			for _, n := range f.declares {
				declared[n] = true
			}
		}
		for _, f := range files {
			for _, n := range f.declares {
				if declared[n] {
					continue
				}
				for _, u := range built {
					if (!u.test || f.test) && uses(u.ast, n) {
						t.Errorf("%s: %s uses %s, which only %s declares: no file declares it for %s/%s",
							dir, u.name, n, f.name, tg.goos, tg.goarch)
					}
				}
			}
		}
	}
}

// parseDir parses the Go files of dir.
func parseDir(t *testing.T, dir string) []goFile {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []goFile
	for _, p := range names {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, goFile{name: filepath.Base(p), test: strings.HasSuffix(p, "_test.go"), declares: topNames(f), ast: f})
	}
	return files
}

// topNames lists the names f declares at the top level.
func topNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			} else {
				names = append(names, "method."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// uses reports whether f refers to the top-level name n outside its own
// declarations of it: a method ("method.M") by any selector .M.
func uses(f *ast.File, n string) bool {
	if slices.Contains(topNames(f), n) {
		return false
	}
	method, isMethod := strings.CutPrefix(n, "method.")
	found := false
	ast.Inspect(f, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.SelectorExpr:
			found = found || isMethod && x.Sel.Name == method
		case *ast.Ident:
			found = found || !isMethod && x.Name == n
		}
		return !found
	})
	return found
}
