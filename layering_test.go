package casckpt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers is the layer diagram of docs/layers.md (../shared/STYLE.md's, as
// the redesign left it): for each package of the module (module-relative;
// "casckpt" is the root package), the module packages its non-test files
// may import. "x/..." is x and every package
// below it; "..." is anything. A package without an entry takes the entry
// of its nearest listed parent (cas/packstore/s3 that of cas/packstore);
// every package may also import the packages under its own internal/
// directory. Keep it in step with the diagram.
var layers = map[string][]string{
	"cmd/casckpt":               {"casckpt", "jsonapi", "migrate/...", "integrations/..."},
	"migrate/gitimport":         {"casckpt", "manifest", "cas"},   // casckpt through gitimport.Importer (and its errors)
	"migrate":                   {"migrate/gitimport", "casckpt"}, // each reader (migrate/hermes); casckpt for JSONPath
	"integrations/mcp":          {"casckpt", "jsonapi", "integrations/internal/cmdline"},
	"integrations/internal":     {}, // cmdline: the command lines the in-process hosts run
	"integrations/claudecode":   {"casckpt", "jsonapi"},
	"integrations/web":          {"jsonapi", "integrations/internal/cmdline"},
	"jsonapi":                   {},                                     // the standard library only
	"jsonapi/internal/genout":   {},                                     // the main of the one-file generators
	"jsonapi/internal/pyfields": {"jsonapi", "jsonapi/internal/genout"}, // go generate: the Python client's fields.json
	"jsonapi/internal/mdtables": {"jsonapi"},                            // go generate: docs/commands.md's key tables
	"jsonapi/internal/tstypes":  {"jsonapi", "jsonapi/internal/genout"}, // go generate: the TypeScript client's documents.ts
	"casckpt":                   {"jsonapi", "repo/...", "index", "gc", "manifest", "cas", "internal/restorer", "internal/scan", "internal/statcache", "internal/textdiff", "internal/jsondiff", "internal/undo", "internal/osfs", "internal/machine"},
	"repo":                      {"index", "gc", "manifest", "cas", "cas/packstore", "internal/osfs"},                 // the records, the objects, the lock and the Backend seam
	"repo/bucket":               {"repo", "index", "gc", "cas", "cas/s3store", "internal/remote", "internal/machine"}, // the bucket backend
	"internal/restorer":         {"internal/osfs", "manifest", "cas"},
	"internal/textdiff":         {}, // the standard library only
	"internal/jsondiff":         {}, // the standard library only
	"internal/undo":             {"internal/restorer", "internal/textdiff", "manifest", "cas"},
	"internal/scan":             {"manifest", "cas", "internal/statcache", "internal/gitindex", "internal/osfs"},
	"internal/osfs":             {}, // the standard library and golang.org/x/sys only
	"internal/gitindex":         {}, // the standard library only
	"internal/statcache":        {"cas"},
	"internal/testtree":         {}, // the standard library only
	"internal/release":          {}, // go run ./internal/release: runs go, git and python3
	"internal/remote":           {"cas", "internal/machine"},
	"internal/machine":          {}, // the standard library only
	"gc":                        {"manifest", "cas"},
	"index":                     {"cas", "internal/statcache", bboltPath + "/..."},
	"manifest":                  {"cas"},
	"cas":                       {"internal/osfs"}, // the standard library, blake3, zstd; osfs to sync a directory
	"cas/packstore":             {"cas"},
	"cas/s3store":               {"cas"}, // and minio-go
	"cas/packtest":              {"cas"},
	"cas/castest":               {"cas"},
	"internal/s3test":           {},      // minio-go only; runs versitygw
	"bench":                     {"..."}, // test files only

	// test support: a bucket in memory, its server clock set by the test
	"internal/s3test/membucket": {"cas", "cas/s3store"},
}

// bboltPath is the database library only index may import.
const bboltPath = "go.etcd.io/bbolt"

// testSupport are packages that only _test.go files may import.
var testSupport = []string{"cas/castest", "cas/packtest", "internal/s3test", "internal/s3test/membucket", "internal/testtree", "migrate/gitimport/gittest"}

// listedPackage is what go list -json says of a package that the check
// needs.
type listedPackage struct {
	Dir          string
	ImportPath   string
	Module       struct{ Path string }
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// TestLayering fails for every import of a module package (or of bbolt)
// that breaks the layer diagram.
func TestLayering(t *testing.T) {
	pkgs := goList(t)
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range layerViolations(pkgs) {
		t.Error(v)
	}
}

// goList lists the module's packages.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
}

// layerViolations returns one message per import that breaks the rules.
func layerViolations(pkgs []listedPackage) []string {
	var out []string
	for _, p := range pkgs {
		name := relName(p.Module.Path, p.ImportPath)
		key, ok := ruleOf(name)
		if !ok {
			out = append(out, fmt.Sprintf("%s has no layer rule: add it to the diagram in STYLE.md and to layers", name))
			continue
		}
		for _, imp := range p.Imports {
			if msg := checkImport(p, name, key, imp); msg != "" {
				out = append(out, msg)
			}
		}
		if name == "casckpt" {
			imps := slices.Concat(p.TestImports, p.XTestImports)
			slices.Sort(imps)
			for _, imp := range slices.Compact(imps) {
				if isBbolt(imp) {
					out = append(out, fmt.Sprintf("casckpt (root) tests import %s (%s): only index may import bbolt, even in the root package's tests",
						imp, importingFiles(p, imp, slices.Concat(p.TestGoFiles, p.XTestGoFiles))))
				}
			}
		}
	}
	return out
}

// checkImport returns why package name (whose rule is key) may not import
// imp, or "" when it may.
func checkImport(p listedPackage, name, key, imp string) string {
	var target string
	switch {
	case isBbolt(imp):
		target = imp
	case imp == p.Module.Path || strings.HasPrefix(imp, p.Module.Path+"/"):
		target = relName(p.Module.Path, imp)
	default:
		return "" // the standard library or another module: not checked
	}
	files := importingFiles(p, imp, p.GoFiles)
	if slices.Contains(testSupport, target) {
		return fmt.Sprintf("%s imports %s (%s): %s is test support, only _test.go files may import it", name, target, files, target)
	}
	if strings.HasPrefix(target, key+"/internal/") || slices.ContainsFunc(layers[key], func(pat string) bool { return matches(pat, target) }) {
		return ""
	}
	if isBbolt(imp) {
		return fmt.Sprintf("%s imports %s (%s): only index may import bbolt", name, imp, files)
	}
	allowed := "nothing of this module"
	if len(layers[key]) > 0 {
		allowed = strings.Join(layers[key], ", ")
	}
	return fmt.Sprintf("%s imports %s (%s): the layer diagram lets %s import only %s", name, target, files, key, allowed)
}

// relName names a module package by its path in the module, the root
// package "casckpt".
func relName(module, importPath string) string {
	if importPath == module {
		return "casckpt"
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// ruleOf returns the layers entry that applies to package name: its own,
// or that of its nearest listed parent.
func ruleOf(name string) (string, bool) {
	for k := name; ; k = filepath.Dir(k) {
		if _, ok := layers[k]; ok {
			return k, true
		}
		if !strings.Contains(k, "/") {
			return "", false
		}
	}
}

// matches reports whether package target is one pattern pat names.
func matches(pat, target string) bool {
	if pat == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pat, "/..."); ok {
		return target == base || strings.HasPrefix(target, base+"/")
	}
	return target == pat
}

func isBbolt(imp string) bool { return imp == bboltPath || strings.HasPrefix(imp, bboltPath+"/") }

// importingFiles names the files among files of p that import imp, for
// the message (the package's directory when none can be read).
func importingFiles(p listedPackage, imp string, files []string) string {
	var names []string
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, s := range af.Imports {
			if path, _ := strconv.Unquote(s.Path.Value); path == imp {
				names = append(names, f)
			}
		}
	}
	if len(names) == 0 {
		return p.Dir
	}
	return strings.Join(names, ", ")
}

// TestLayeringCatchesBadImports checks the checker on made-up packages:
// a graph that keeps the diagram passes, and each kind of breach is named.
func TestLayeringCatchesBadImports(t *testing.T) {
	const mod = "example.com/m"
	// pkg is package name of module mod; imports name module packages
	// unless they hold a dot or are "fmt".
	pkg := func(name string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: mod + "/" + name, Dir: t.TempDir()}
		if name == "casckpt" {
			p.ImportPath = mod
		}
		p.Module.Path = mod
		for _, imp := range imports {
			if !strings.Contains(imp, ".") && imp != "fmt" {
				imp = mod + "/" + imp
			}
			p.Imports = append(p.Imports, imp)
		}
		return p
	}
	root := func(imports ...string) listedPackage {
		p := pkg("casckpt", imports...)
		p.TestImports = []string{mod + "/internal/testtree", mod + "/cas/castest"}
		return p
	}
	good := []listedPackage{
		pkg("cmd/casckpt", mod, "migrate/hermes", "migrate/gitimport", "fmt"),
		pkg("migrate/gitimport", mod, "manifest", "cas", "github.com/go-git/go-git/v5"),
		pkg("migrate/hermes", mod, "migrate/gitimport"),
		pkg("migrate/cline", "migrate/gitimport"),
		root("index", "gc", "manifest", "cas", "internal/scan", "internal/restorer", "repo", "repo/bucket"),
		pkg("repo", "index", "gc", "cas", "cas/packstore", "internal/osfs"),
		pkg("repo/bucket", "repo", "index", "cas", "cas/s3store", "internal/remote"),
		pkg("internal/scan", "manifest", "cas", "internal/statcache"),
		pkg("index", "cas", "internal/statcache", bboltPath, bboltPath+"/errors"),
		pkg("cas", "cas/internal/pack", "github.com/zeebo/blake3"),
		pkg("cas/internal/pack"),
		pkg("cas/packstore/s3", "cas"),
		pkg("bench", mod, "index", bboltPath),
	}
	if v := layerViolations(good); len(v) != 0 {
		t.Fatalf("a graph that keeps the diagram: %q", v)
	}
	withTestBbolt := root()
	withTestBbolt.XTestImports = []string{bboltPath}
	for _, tc := range []struct {
		p    listedPackage
		want string
	}{
		{pkg("manifest", "cas", "index"), "manifest imports index"},
		{pkg("cas", bboltPath), "cas imports go.etcd.io/bbolt"},
		{root(bboltPath), "casckpt imports go.etcd.io/bbolt"},
		{pkg("internal/scan", "index"), "internal/scan imports index"},
		{pkg("cmd/casckpt", "cas"), "cmd/casckpt imports cas"},
		{pkg("gc", "internal/testtree"), "internal/testtree is test support"},
		{pkg("cas/packstore", "index"), "cas/packstore imports index"},
		{pkg("cas/s3store", "cas/packstore"), "cas/s3store imports cas/packstore"},
		{pkg("cas/s3store", "internal/s3test"), "internal/s3test is test support"},
		{pkg("newthing", "cas"), "newthing has no layer rule"},
		{pkg("migrate/gitimport", "migrate/hermes"), "migrate/gitimport imports migrate/hermes"},
		{pkg("migrate/hermes", "manifest"), "migrate/hermes imports manifest"},
		{pkg("migrate/cline", "index"), "migrate/cline imports index"},
		{pkg("migrate/hermes", "migrate/gitimport/gittest"), "migrate/gitimport/gittest is test support"},
		{withTestBbolt, "casckpt (root) tests import go.etcd.io/bbolt"},
		{root("cas/s3store"), "casckpt imports cas/s3store"},
		{root("internal/remote"), "casckpt imports internal/remote"},
		{pkg("repo", "repo/bucket"), "repo imports repo/bucket"},
		{pkg("repo", "cas/s3store"), "repo imports cas/s3store"},
	} {
		v := layerViolations([]listedPackage{tc.p})
		if len(v) != 1 || !strings.Contains(v[0], tc.want) {
			t.Errorf("want one violation %q, got %q", tc.want, v)
		}
	}
}
