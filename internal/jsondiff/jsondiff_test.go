package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// show writes changes one a line: op path from to ("-" for absent).
func show(changes []Change) string {
	var b strings.Builder
	for _, c := range changes {
		from, to := string(c.From), string(c.To)
		if c.From == nil {
			from = "-"
		}
		if c.To == nil {
			to = "-"
		}
		fmt.Fprintf(&b, "%s %s %s %s\n", c.Op, c.Path, from, to)
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct{ name, a, b, want string }{
		{"equal", `{"a":1}`, "{ \"a\" :\n 1 }", ""},
		{"changed number keeps its text", `{"iteration":5,"big":12345678901234567890.5}`, `{"iteration":7,"big":12345678901234567890.6}`,
			"changed $.big 12345678901234567890.5 12345678901234567890.6\nchanged $.iteration 5 7\n"},
		{"numbers as written", `[1, 1e2]`, `[1.0, 100]`, "changed $[0] 1 1.0\nchanged $[1] 1e2 100\n"},
		{"nested and deepest", `{"a":{"b":{"c":[1,2,{"d":true}]}}}`, `{"a":{"b":{"c":[1,2,{"d":false}]}}}`, "changed $.a.b.c[2].d true false\n"},
		{"added and removed keys, sorted", `{"z":1,"m":2}`, `{"m":2,"b":{"x": [1, 2]}}`, "added $.b - {\"x\":[1,2]}\nremoved $.z 1 -\n"},
		{"array grows", `{"steps":[{"n":1}]}`, `{"steps":[{"n":1},{"n":2},3]}`, "added $.steps[1] - {\"n\":2}\nadded $.steps[2] - 3\n"},
		{"array shrinks", `[1,2,3]`, `[1]`, "removed $[1] 2 -\nremoved $[2] 3 -\n"},
		{"arrays by position", `["a","b"]`, `["x","a","b"]`, "changed $[0] \"a\" \"x\"\nchanged $[1] \"b\" \"a\"\nadded $[2] - \"b\"\n"},
		{"type changes", `{"a":{"x":1},"b":[1],"c":"1","d":true}`, `{"a":[1],"b":{},"c":1,"d":"true"}`,
			"changed $.a {\"x\":1} [1]\nchanged $.b [1] {}\nchanged $.c \"1\" 1\nchanged $.d true \"true\"\n"},
		{"null", `{"a":null,"b":1,"c":null}`, `{"a":1,"b":null,"c":null,"d":null}`,
			"changed $.a null 1\nchanged $.b 1 null\nadded $.d - null\n"},
		{"booleans", `[true,false]`, `[false,true]`, "changed $[0] true false\nchanged $[1] false true\n"},
		{"root type", `{}`, `[]`, "changed $ {} []\n"},
		{"strings compare decoded", `["\u0041","a\/b","x"]`, `["A","a/b","y"]`, "changed $[2] \"x\" \"y\"\n"},
		{"keys in brackets", `{"a b":1,"":1,"1x":1,"x-y":1,"q\"\\":1,"é":1,"t\u0001":1,"_ok9":1,"l\r\n":1}`,
			`{"a b":2,"":2,"1x":2,"x-y":2,"q\"\\":2,"é":2,"t\u0001":2,"_ok9":2,"l\r\n":2}`,
			"changed $[\"\"] 1 2\nchanged $[\"1x\"] 1 2\nchanged $._ok9 1 2\nchanged $[\"a b\"] 1 2\nchanged $[\"l\\r\\n\"] 1 2\n" +
				"changed $[\"q\\\"\\\\\"] 1 2\nchanged $[\"t\\u0001\"] 1 2\nchanged $[\"x-y\"] 1 2\nchanged $[\"é\"] 1 2\n"},
		{"escaped keys match", `{"\u0061":1}`, `{"a":2}`, "changed $.a 1 2\n"},
		{"last of a duplicate key counts", `{"a":1,"a":2}`, `{"a":2}`, ""},
		{"values keep their escapes", `{"s":1}`, `{"s":"\u00e9 <b>"}`, "changed $.s 1 \"\\u00e9 <b>\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, ok := Diff([]byte(tc.a), []byte(tc.b))
			if !ok {
				t.Fatal("not documents")
			}
			if changes == nil || show(changes) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", show(changes), tc.want)
			}
			checkApplies(t, []byte(tc.a), []byte(tc.b), changes)
		})
	}
}

func TestNotDocuments(t *testing.T) {
	doc := []byte(`{"a":1}`)
	for _, bad := range []string{
		"", " ", "5", `"x"`, "null", "true", `{"a":1}{}`, `{"a":1} x`, `{"a":}`, `{"a" 1}`, `[1,]`, `{,}`, `[01]`,
		`["\x"]`, `["\u12"]`, `["abc`, `["\`, `["\u12`, "[\"a\tb\"]", "\xef\xbb\xbf{}", "[\"\xff\"]", `{"a":1`, `[1.]`, `[1e]`, `[-]`, `[tru]`, `{1:2}`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		if _, ok := Diff([]byte(bad), doc); ok {
			t.Errorf("%q taken for a document", bad)
		}
		if _, ok := Diff(doc, []byte(bad)); ok {
			t.Errorf("%q taken for a document", bad)
		}
	}
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, ok := Diff([]byte(deep), []byte(deep)); !ok {
		t.Error("a document nested as deep as encoding/json allows is refused")
	}
	big := append([]byte("["), bytes.Repeat([]byte("1,"), MaxSize/2)...)
	big[len(big)-1] = ']'
	if _, ok := Diff(big, doc); ok {
		t.Errorf("a document over MaxSize (%d bytes) is compared", len(big))
	}
}

// checkApplies checks that changes, applied to a, give b, and that each
// From is the value a has at its path.
func checkApplies(t *testing.T, a, b []byte, changes []Change) {
	t.Helper()
	got, want := decode(t, a), decode(t, b)
	for _, c := range changes {
		if (c.From == nil) != (c.Op == Added) || (c.To == nil) != (c.Op == Removed) || c.Op != Added && c.Op != Removed && c.Op != Changed {
			t.Fatalf("change %+v", c)
		}
		for _, v := range []json.RawMessage{c.From, c.To} {
			var buf bytes.Buffer
			if v != nil && (json.Compact(&buf, v) != nil || !bytes.Equal(buf.Bytes(), v)) {
				t.Fatalf("value %q of %s is not compact JSON", v, c.Path)
			}
		}
		got = apply(t, got, steps(t, c.Path), c)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the changes applied to %s give %v, not %s", a, got, b)
	}
	if len(changes) == 0 != reflect.DeepEqual(decode(t, a), want) {
		t.Fatalf("%d changes from %s to %s", len(changes), a, b)
	}
}

func decode(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return v
}

// steps parses a change's path back into keys (string) and positions (int).
func steps(t *testing.T, path string) []any {
	t.Helper()
	if !strings.HasPrefix(path, "$") {
		t.Fatalf("path %q", path)
	}
	var out []any
	for rest := path[1:]; rest != ""; {
		switch {
		case rest[0] == '.':
			n := 1
			for n < len(rest) && rest[n] != '.' && rest[n] != '[' {
				n++
			}
			if !isIdentifier([]byte(rest[1:n])) {
				t.Fatalf("path %q: %q is no identifier", path, rest[1:n])
			}
			out, rest = append(out, rest[1:n]), rest[n:]
		case strings.HasPrefix(rest, `["`):
			dec := json.NewDecoder(strings.NewReader(rest[1:]))
			var key string
			if err := dec.Decode(&key); err != nil || isIdentifier([]byte(key)) {
				t.Fatalf("path %q: key %q, %v", path, key, err)
			}
			rest = rest[1+dec.InputOffset():]
			if !strings.HasPrefix(rest, "]") {
				t.Fatalf("path %q", path)
			}
			out, rest = append(out, key), rest[1:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:max(end, 1)])
			if end < 0 || err != nil {
				t.Fatalf("path %q", path)
			}
			out, rest = append(out, i), rest[end+1:]
		default:
			t.Fatalf("path %q", path)
		}
	}
	return out
}

// apply applies change c at steps below node and returns the new node.
func apply(t *testing.T, node any, steps []any, c Change) any {
	t.Helper()
	if len(steps) == 0 {
		if c.Op != Changed || !reflect.DeepEqual(node, decode(t, c.From)) {
			t.Fatalf("%s %s: from %s, have %v", c.Op, c.Path, c.From, node)
		}
		return decode(t, c.To)
	}
	last := len(steps) == 1
	switch s := steps[0].(type) {
	case string:
		m, ok := node.(map[string]any)
		old, has := m[s]
		switch {
		case !ok:
			t.Fatalf("%s: not an object", c.Path)
		case last && c.Op == Added && !has:
			m[s] = decode(t, c.To)
		case last && c.Op == Removed && has && reflect.DeepEqual(old, decode(t, c.From)):
			delete(m, s)
		case has && (!last || c.Op == Changed):
			m[s] = apply(t, old, steps[1:], c)
		default:
			t.Fatalf("%s %s: have %v", c.Op, c.Path, m)
		}
		return m
	case int:
		a, ok := node.([]any)
		switch {
		case !ok:
			t.Fatalf("%s: not an array", c.Path)
		case last && c.Op == Added && s == len(a):
			return append(a, decode(t, c.To))
		case last && c.Op == Removed && s < len(a) && reflect.DeepEqual(a[s], decode(t, c.From)):
			return a[:s:s] // the removed positions are the last, in order
		case last && c.Op == Removed && s >= len(a):
			return a
		case s < len(a) && (!last || c.Op == Changed):
			a[s] = apply(t, a[s], steps[1:], c)
		default:
			t.Fatalf("%s %s: have %v", c.Op, c.Path, a)
		}
		return a
	}
	panic("unreachable")
}

// isDocument is what the package doc calls a document, by encoding/json.
func isDocument(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return json.Valid(data) && utf8.Valid(data) && len(data) <= MaxSize && len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

func FuzzJSONDiff(f *testing.F) {
	f.Add([]byte(`{"iteration":5,"steps":[{"n":1}],"a b":null}`), []byte(`{"iteration":7,"steps":[{"n":1},{"n":2}],"a b":[1e5]}`))
	f.Add([]byte(`[1,"\u0041",{"x":[true]}]`), []byte(`[1.0,"A",{"x":[false,{}]},"\ud800"]`))
	f.Add([]byte(`{"a":1,"a":{"b":2}}`), []byte(`{"a":{"b":3},"":[]}`))
	f.Add([]byte(`{}`), []byte(`[`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		changes, ok := Diff(a, b)
		if ok != (isDocument(a) && isDocument(b)) {
			t.Fatalf("Diff(%q, %q) ok %v; documents %v, %v", a, b, ok, isDocument(a), isDocument(b))
		}
		if !ok {
			return
		}
		checkApplies(t, a, b, changes)
		if same, _ := Diff(a, a); len(same) != 0 {
			t.Fatalf("%q differs from itself: %v", a, same)
		}
	})
}

// BenchmarkJSONDiff10MB diffs two versions of a 10 MB workflow state
// that differ in a counter, one step and one more step: the issue asks
// for under a second.
func BenchmarkJSONDiff10MB(b *testing.B) {
	old, changed := state(10<<20, false), state(10<<20, true)
	b.SetBytes(int64(len(old) + len(changed)))
	for b.Loop() {
		changes, ok := Diff(old, changed)
		if !ok || len(changes) != 3 {
			b.Fatalf("%v %s", ok, show(changes))
		}
	}
}

// state is a workflow state of about size bytes; changed moves its
// iteration on, renames one step and adds one.
func state(size int, changed bool) []byte {
	var buf bytes.Buffer
	iteration, extra := 5, 0
	if changed {
		iteration, extra = 7, 1
	}
	fmt.Fprintf(&buf, "{\n  \"iteration\": %d,\n  \"steps\": [", iteration)
	n := 0
	for ; buf.Len() < size; n++ {
		name := fmt.Sprintf("step %d", n)
		if changed && n == 1000 {
			name = "step one thousand"
		}
		fmt.Fprintf(&buf, "\n    {\"id\": %d, \"name\": %q, \"ok\": true, \"score\": %d.25, \"tags\": [\"a\", \"b\"], \"out\": null},", n, name, n)
	}
	for i := range extra {
		fmt.Fprintf(&buf, "\n    {\"id\": %d},", n+i)
	}
	buf.Truncate(buf.Len() - 1)
	buf.WriteString("\n  ]\n}\n")
	return buf.Bytes()
}
