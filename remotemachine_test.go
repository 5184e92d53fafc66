package casckpt

import (
	"testing"

	"github.com/casckpt/casckpt/repo"
)

// TestSplitWorkdir: another machine's project names its machine and path;
// this machine's is its path.
func TestSplitWorkdir(t *testing.T) {
	if m, p := SplitWorkdir(repo.ForeignWorkdir("b", "/workspace")); m != "b" || p != "/workspace" {
		t.Fatalf("%q %q", m, p)
	}
	if m, p := SplitWorkdir("/workspace"); m != "" || p != "/workspace" {
		t.Fatalf("%q %q", m, p)
	}
	if workdirName(repo.ForeignWorkdir("b", "/w")) != "/w on machine b" {
		t.Fatal(workdirName(repo.ForeignWorkdir("b", "/w")))
	}
}
