package textdiff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
				"@@ -15,6 +15,6 @@ line 14\n line 15\n line 16\n line 17\n-line 18\n+line eighteen\n line 19\n line 20\n",
			insertions: 2, dels: 2},
		{name: "slid as git's indent heuristic slides it", oldLabel: "a/f", newLabel: "b/f",
			old:        "\t\tz()\n\t}\nfunc f() {\nfunc f() {\n\tif y {\n\t\tz()\n\n\n\tif y {\n\n\t\tz()\n",
			new:        "\t\tz()\n\t}\nfunc f() {\nfunc f() {\n\tif y {\n\t\tz()\n\n\n\tif y {\n}\n\tif y {\n\t\tz()\n\tif y {\n\n\t\tz()\n",
			patch:      "--- a/f\n+++ b/f\n@@ -6,6 +6,10 @@ func f() {\n \t\tz()\n \n \n+\tif y {\n+}\n+\tif y {\n+\t\tz()\n \tif y {\n \n \t\tz()\n",
			insertions: 4},
		{name: "equal", oldLabel: "a/f", old: "same\n", newLabel: "b/f", new: "same\n"},
		{name: "both empty", oldLabel: "a/f", newLabel: "b/f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Unified(tc.oldLabel, tc.newLabel, []byte(tc.old), []byte(tc.new))
			if r.Patch != tc.patch {
				t.Errorf("patch\n%s\nwant\n%s", r.Patch, tc.patch)
			}
			if r.Insertions != tc.insertions || r.Deletions != tc.dels {
				t.Errorf("+%d -%d, want +%d -%d", r.Insertions, r.Deletions, tc.insertions, tc.dels)
			}
			c := Count([]byte(tc.old), []byte(tc.new))
			if want := (Result{Insertions: tc.insertions, Deletions: tc.dels}); c != want {
				t.Errorf("Count = %+v, want %+v", c, want)
			}
		})
	}
}

// TestRandomEdits: over random edits of texts with many repeated lines
// (where a diff has most choices), with and without a final newline,
// ASCII or not, Unified's patch turns the old text into the new one and
// Count counts what it holds.
func TestRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	words := []string{"a", "b", "}", "", "\treturn nil", "x := 1", "é", "a b"}
	text := func(lines []string, newline bool) []byte {
		s := strings.Join(lines, "\n")
		if newline && len(lines) > 0 {
			s += "\n"
		}
		return []byte(s)
	}
	for i := range 3000 {
		var lines []string
		for range rng.IntN(200) {
			lines = append(lines, words[rng.IntN(len(words))])
		}
		edited := slices.Clone(lines)
		for range 1 + rng.IntN(1+rng.IntN(60)) {
			at := rng.IntN(len(edited) + 1)
			switch w := words[rng.IntN(len(words))]; {
			case rng.IntN(3) == 0:
				edited = slices.Insert(edited, at, w)
			case at < len(edited) && rng.IntN(2) == 0:
				edited = slices.Delete(edited, at, at+1)
			case at < len(edited):
				edited[at] = w
			}
		}
		old, new := text(lines, rng.IntN(4) != 0), text(edited, rng.IntN(4) != 0)
		u := Unified("a", "b", old, new)
		if got, err := apply(u.Patch, string(old)); err != nil || got != string(new) {
			t.Fatalf("case %d: the patch does not give the new text (%v)\nold %q\nnew %q\n%s", i, err, old, new, u.Patch)
		}
		c := Count(old, new)
		if c.Insertions != u.Insertions || c.Deletions != u.Deletions {
			t.Fatalf("case %d: Count +%d -%d, Unified +%d -%d", i, c.Insertions, c.Deletions, u.Insertions, u.Deletions)
		}
	}
}

// apply applies a unified patch to old, as patch(1) would.
func apply(patch, old string) (string, error) {
	if patch == "" {
		return old, nil
	}
	src := strings.SplitAfter(old, "\n")
	body := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	var out strings.Builder
	next := 0 // the next line of src to copy
	for i := 0; i < len(body); i++ {
		l := body[i]
		text := func() string { // l's text, with its newline unless the next line says none
			if i+1 < len(body) && strings.HasPrefix(body[i+1], "\\") {
				return l[1:]
			}
			return l[1:] + "\n"
		}
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "\\"):
		case strings.HasPrefix(l, "@@"):
			var from int
			if _, err := fmt.Sscanf(l, "@@ -%d", &from); err != nil {
				return "", err
			}
			if strings.HasPrefix(l, fmt.Sprintf("@@ -%d,0 ", from)) {
				from++ // an insertion after line from
			}
			for ; next < from-1; next++ {
				out.WriteString(src[next])
			}
		case strings.HasPrefix(l, "+"):
			out.WriteString(text())
		case strings.HasPrefix(l, "-"), strings.HasPrefix(l, " "):
			if next >= len(src) || src[next] != text() {
				return "", errors.New("the patch does not match at line " + fmt.Sprint(next+1))
			}
			if l[0] == ' ' {
				out.WriteString(src[next])
			}
			next++
		default:
			return "", errors.New("unexpected patch line " + l)
		}
	}
	for ; next < len(src); next++ {
		out.WriteString(src[next])
	}
	return out.String(), nil
}

// largeEdit is a text of about 20 MB (400,000 lines, some repeated) and
// a copy of it with changed lines, spread evenly.
func largeEdit(changed int) (old, new []byte) {
	var a, b strings.Builder
	const lines = 400_000
	for i := range lines {
		l := fmt.Sprintf("\tline %07d of a large generated file, padded to fifty bytes\n", i)
		if i%100 == 0 {
			l = "}\n"
		}
		a.WriteString(l)
		if i%(lines/changed) == lines/changed/2 {
			l = fmt.Sprintf("\tline %07d changed\n", i)
		}
		b.WriteString(l)
	}
	return []byte(a.String()), []byte(b.String())
}

// TestLargeFile: 300 changed lines of a 20 MB file count as 300 lines
// inserted and 300 deleted, and the patch holds them in 300 hunks.
func TestLargeFile(t *testing.T) {
	old, new := largeEdit(300)
	c := Count(old, new)
	if c.Insertions != 300 || c.Deletions != 300 {
		t.Errorf("Count = +%d -%d, want +300 -300", c.Insertions, c.Deletions)
	}
	u := Unified("a/f", "b/f", old, new)
	if u.Insertions != 300 || u.Deletions != 300 || strings.Count(u.Patch, "\n@@ ") != 300 {
		t.Errorf("Unified = +%d -%d in %d hunks, want +300 -300 in 300", u.Insertions, u.Deletions, strings.Count(u.Patch, "\n@@ "))
	}
}

// BenchmarkLargeFile diffs 300 changed lines of a 20 MB file.
func BenchmarkLargeFile(b *testing.B) {
	old, new := largeEdit(300)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		Unified("a/f", "b/f", old, new)
	}
}
