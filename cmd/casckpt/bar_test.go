package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/schollz/progressbar/v3"
)

// TestFirstTickShowsNoRate: the first tick of a bytes bar, however many
// bytes it brings at once, draws no rate: the bar's clock started when it
// was made, and the tick waits for the throttle (made an hour here, so
// that no machine is slow enough to pass it).
func TestFirstTickShowsNoRate(t *testing.T) {
	for _, total := range []int64{-1, 100 << 30} {
		var w bytes.Buffer
		bar := newBytesBar(&w, total, progressbar.OptionThrottle(time.Hour), progressbar.OptionSetDescription("hashing"))
		_ = bar.Set64(70 << 30)
		_ = bar.Exit()
		if strings.Contains(w.String(), "/s") {
			t.Fatalf("total %d: the first tick drew a rate: %q", total, w.String())
		}
		if !strings.Contains(w.String(), "hashing") {
			t.Fatalf("total %d: the bar was not drawn at once: %q", total, w.String())
		}
	}
}
