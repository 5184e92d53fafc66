package jsonapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/casckpt/casckpt/jsonapi"
)

// TestPath: a path that is valid UTF-8 is written as encoding/json
// writes a string (without HTML escapes); one that is not has each byte
// outside valid UTF-8 written \udcXX; both read back to the same bytes.
func TestPath(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"plain/x.go", `"plain/x.go"`},
		{"a<b>&\"q\"\\\n\x01\u2028é", `"a<b>&\"q\"\\\n\u0001\u2028é"`},
		{"bad\xffname", `"bad\udcffname"`},
		{`a\udcff\xff`, `"a\\udcff\\xff"`},                           // backslashes, not escapes
		{"\xe2\x82", `"\udce2\udc82"`},                               // a cut sequence: each byte
		{"\xed\xa0\x80", `"\udced\udca0\udc80"`},                     // an encoded surrogate is not UTF-8
		{"\xc0\xaf/\xef\xbf\xbd", `"\udcc0\udcaf/` + "\ufffd" + `"`}, // overlong; a real U+FFFD stays
	} {
		got, err := encode(jsonapi.Path(tc.path))
		if err != nil || string(got) != tc.want {
			t.Errorf("Marshal(%q) = %s, %v; want %s", tc.path, got, err, tc.want)
		}
		var back jsonapi.Path
		if err := json.Unmarshal(got, &back); err != nil || string(back) != tc.path {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", got, back, err, tc.path)
		}
	}
	// Escapes of other kinds read as encoding/json reads them.
	var p jsonapi.Path
	if err := json.Unmarshal([]byte(`"\u00e9\ud83d\ude00\/\t\udcff\ud800x\udc41"`), &p); err != nil || string(p) != "é😀/\t\xff\ufffdx\ufffd" {
		t.Errorf("escapes read as %q, %v", p, err)
	}
	for _, bad := range []string{`42`, `"\x"`, `"\u12"`, "\"a\x01\""} {
		if err := json.Unmarshal([]byte(bad), &p); err == nil {
			t.Errorf("%q read as a path", bad)
		}
	}
}

// TestPathPython: random byte strings written by Path are read by
// Python's json.loads and os.fsencode as the same bytes, and Python's own
// json.dumps of its surrogateescape decoding reads back as them (python3
// is the oracle; the test is skipped without it).
func TestPathPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	rng := rand.New(rand.NewPCG(17, 22))
	alphabet := []string{"a", "/", "é", "😀", "\xff", "\x80", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f", "\xc3", "\"", "\\", "\n", "\ufffd"}
	var paths []string
	var doc bytes.Buffer
	for range 300 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		paths = append(paths, b.String())
		line, err := encode(jsonapi.Path(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		doc.Write(line)
		doc.WriteByte('\n')
	}
	script := `
import json, os, sys
for line in sys.stdin.buffer.read().decode("utf-8").splitlines():
    s = json.loads(line)
    sys.stdout.buffer.write(os.fsencode(s).hex().encode() + b" " + json.dumps(s).encode() + b"\n")
`
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = &doc
	cmd.Stderr = os.Stderr
	cmd.Env = []string{"LC_ALL=C.UTF-8", "PYTHONUTF8=1"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("python3 printed %d lines for %d paths", len(lines), len(paths))
	}
	for i, l := range lines {
		hexBytes, dumped, _ := strings.Cut(l, " ")
		if want := strings.ToLower(hexOf(paths[i])); hexBytes != want {
			t.Errorf("%q: Python's os.fsencode gives %s, want %s", paths[i], hexBytes, want)
		}
		var back jsonapi.Path
		if err := json.Unmarshal([]byte(dumped), &back); err != nil || string(back) != paths[i] {
			t.Errorf("Python's %s reads back as %q (%v), want %q", dumped, back, err, paths[i])
		}
		if utf8.ValidString(paths[i]) != !strings.Contains(dumped, `\udc`) {
			t.Errorf("%q: Python wrote %s", paths[i], dumped)
		}
	}
}

// encode writes v as the --json documents do: no HTML escapes.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}
