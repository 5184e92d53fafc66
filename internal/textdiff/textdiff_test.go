package textdiff

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	var long, longEdited strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
		switch i {
		case 2:
			longEdited.WriteString("line two\n")
		case 18:
			longEdited.WriteString("line eighteen\n")
		default:
			fmt.Fprintf(&longEdited, "line %d\n", i)
		}
	}
	for _, tc := range []struct {
		name             string
		oldLabel, old    string
		newLabel, new    string
		patch            string
		insertions, dels int64
	}{
		{name: "modified", oldLabel: "a/f", old: "a\nb\nc\n", newLabel: "b/f", new: "a\nB\nc\n",
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", insertions: 1, dels: 1},
		{name: "added", oldLabel: "/dev/null", old: "", newLabel: "b/f", new: "x\ny\n",
			patch: "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n", insertions: 2},
		{name: "deleted", oldLabel: "a/f", old: "x\n", newLabel: "/dev/null", new: "",
			patch: "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", dels: 1},
		{name: "no trailing newline", oldLabel: "a/f", old: "a\nb", newLabel: "b/f", new: "a\nc",
			patch:      "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
			insertions: 1, dels: 1},
		{name: "newline added at the end", oldLabel: "a/f", old: "a", newLabel: "b/f", new: "a\n",
			patch: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n", insertions: 1, dels: 1},
		{name: "two hunks", oldLabel: "a/f", old: long.String(), newLabel: "b/f", new: longEdited.String(),
			patch: "--- a/f\n+++ b/f\n" +
				"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+line two\n line 3\n line 4\n line 5\n" +
				"@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+line eighteen\n line 19\n line 20\n",
			insertions: 2, dels: 2},
		{name: "equal", oldLabel: "a/f", old: "same\n", newLabel: "b/f", new: "same\n"},
		{name: "both empty", oldLabel: "a/f", newLabel: "b/f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Unified(tc.oldLabel, tc.newLabel, []byte(tc.old), []byte(tc.new))
			if err != nil {
				t.Fatal(err)
			}
			if r.Patch != tc.patch {
				t.Errorf("patch\n%s\nwant\n%s", r.Patch, tc.patch)
			}
			if r.Insertions != tc.insertions || r.Deletions != tc.dels {
				t.Errorf("+%d -%d, want +%d -%d", r.Insertions, r.Deletions, tc.insertions, tc.dels)
			}
			c, err := Count([]byte(tc.old), []byte(tc.new))
			if err != nil {
				t.Fatal(err)
			}
			if want := (Result{Insertions: tc.insertions, Deletions: tc.dels}); c != want {
				t.Errorf("Count = %+v, want %+v", c, want)
			}
		})
	}
}
