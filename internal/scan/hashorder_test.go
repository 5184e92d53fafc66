package scan

import (
	"strings"
	"testing"
)

// TestComparePathsIsJoinOrder: the queue of files to read is ordered as
// their joined paths are, without making them (a path past the stack
// buffer included).
func TestComparePathsIsJoinOrder(t *testing.T) {
	long := strings.Repeat("d", 300)
	cases := []queued{
		{"", &node{name: "a"}}, {"", &node{name: "a-b"}}, {"a", &node{name: "b"}},
		{"a-b", &node{name: "c"}}, {"a/b", &node{name: "c"}}, {"ab", &node{name: ""}},
		{long, &node{name: "x"}}, {long, &node{name: "y"}}, {long + "/e", &node{name: "x"}},
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	for _, a := range cases {
		for _, b := range cases {
			want := strings.Compare(join(a.dir, a.n.name), join(b.dir, b.n.name))
			if got := sign(comparePaths(a, b)); got != want {
				t.Errorf("comparePaths(%q/%q, %q/%q) = %d, want %d", a.dir, a.n.name, b.dir, b.n.name, got, want)
			}
		}
	}
}
