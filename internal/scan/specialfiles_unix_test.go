//go:build unix

package scan

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/casckpt/casckpt/cas/castest"
	"github.com/casckpt/casckpt/internal/testtree"
)

func TestSizeCapFileCapAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	testtree.Write(t, dir, testtree.Tree{
		"small": {Data: "x"},
		"big":   {Data: strings.Repeat("x", 2000)},
		"loop":  {Link: "loop"},
		"up":    {Link: "../../etc"},
	})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	paths, res := captured(t, dir, Options{MaxFileSize: 1000})
	if want := []string{"loop", "small", "up"}; !slices.Equal(paths, want) {
		t.Fatalf("captured %q, want %q", paths, want)
	}
	for _, ex := range []string{"big", "fifo", "sock"} {
		if !slices.Contains(res.Excluded, ex) {
			t.Errorf("%s not reported excluded: %q", ex, res.Excluded)
		}
	}
	m := castest.NewMemory()
	if _, err := Scan(context.Background(), dir, m, Options{MaxFiles: 2}); !errors.Is(err, ErrTooManyFiles) {
		t.Fatalf("file cap: %v, want ErrTooManyFiles", err)
	}
}
