package manifest

import (
	"regexp"
	"testing"
)

func TestTempNames(t *testing.T) {
	form := regexp.MustCompile(`^\.casckpt-[0-9a-f]{16}\.tmp$`)
	seen := map[string]bool{}
	for range 100 {
		n := TempName()
		if !form.MatchString(n) || !IsTemp(n) {
			t.Fatalf("TempName() = %q: not of the form .casckpt-<16 hex>.tmp, or not matched by IsTemp", n)
		}
		if seen[n] {
			t.Fatalf("TempName() repeated %q", n)
		}
		seen[n] = true
	}
	for _, n := range []string{".casckpt-.tmp", ".casckpt-1.tmp"} {
		if !IsTemp(n) {
			t.Errorf("IsTemp(%q) = false: any name of the pattern is a restore's", n)
		}
	}
	for _, n := range []string{"casckpt-1.tmp", ".casckpt-1.tmpx", ".casckpt-1", "a/.casckpt-1.tmp", "x.tmp"} {
		if IsTemp(n) {
			t.Errorf("IsTemp(%q) = true", n)
		}
	}
}
