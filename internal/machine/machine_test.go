package machine

import (
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for m, want := range map[string]bool{
		"": false, "laptop": true, "ci-runner_3.eu": true, strings.Repeat("a", MaxLen): true,
		strings.Repeat("a", MaxLen+1): false, "a b": false, "a/b": false, "a:b": false, "é": false, "a\x00b": false,
	} {
		if got := Valid(m); got != want {
			t.Errorf("Valid(%q) = %v, want %v", m, got, want)
		}
	}
}
