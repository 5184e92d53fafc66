package casckpt

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"@1", "@0", "#1", "#0", "#01", "#18446744073709551616", "abcd", "ABCDEF12", "-rf", "../x", "@", "@-1", strings.Repeat("a", 64), strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseRef(Ref(s))
		if err != nil {
			if !errors.Is(err, ErrBadRef) {
				t.Fatalf("%q: error does not wrap ErrBadRef: %v", s, err)
			}
			return
		}
		if strings.HasPrefix(s, "-") || strings.ContainsAny(s, "/.") {
			t.Fatalf("%q accepted as a reference", s)
		}
		if (p.nth > 0) != strings.HasPrefix(s, "@") || (p.serial > 0) != strings.HasPrefix(s, "#") {
			t.Fatalf("%q parsed to %+v", s, p)
		}
		if p.nth == 0 && p.serial == 0 && (len(p.prefix) < MinPrefix || strings.Trim(p.prefix, "0123456789abcdef") != "") {
			t.Fatalf("%q parsed to a bad prefix %q", s, p.prefix)
		}
	})
}
