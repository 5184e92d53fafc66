package casckpt_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/casckpt/casckpt"
)

// Store.Root finds the project a path belongs to: here the directory
// holding go.mod, for a file that does not exist yet.
func ExampleStore_Root() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	os.MkdirAll(filepath.Join(project, "src"), 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module example\n"), 0o644)
	store, _ := casckpt.Open(filepath.Join(dir, "store"), casckpt.Options{})

	root, err := store.Root(ctx, filepath.Join(project, "src", "new.go"))
	real, _ := filepath.EvalSymlinks(project)
	fmt.Println(root == real, err)
	// Output: true <nil>
}
