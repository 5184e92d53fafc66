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
		{&dirNode{rel: ""}, &node{name: "a"}}, {&dirNode{rel: ""}, &node{name: "a-b"}}, {&dirNode{rel: "a"}, &node{name: "b"}},
		{&dirNode{rel: "a-b"}, &node{name: "c"}}, {&dirNode{rel: "a/b"}, &node{name: "c"}}, {&dirNode{rel: "ab"}, &node{name: ""}},
		{&dirNode{rel: long}, &node{name: "x"}}, {&dirNode{rel: long}, &node{name: "y"}}, {&dirNode{rel: long + "/e"}, &node{name: "x"}},
	}
	sign := func(n int) int { return min(max(n, -1), 1) }
	for _, a := range cases {
		for _, b := range cases {
			want := strings.Compare(join(a.d.rel, a.n.name), join(b.d.rel, b.n.name))
			if got := sign(comparePaths(a, b)); got != want {
				t.Errorf("comparePaths(%q/%q, %q/%q) = %d, want %d", a.d.rel, a.n.name, b.d.rel, b.n.name, got, want)
			}
		}
	}
}
