package main

import (
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// barThrottle is the least time between two draws of a progress bar.
const barThrottle = 100 * time.Millisecond

// newBytesBar returns a progress bar of bytes (total -1: unknown) drawn on
// w, with opts. Its clock starts now and its first draw of progress waits
// one throttle interval, so the rate it shows is an average over at least
// that long: a bar whose clock started at its first tick divided that
// tick's bytes by microseconds ("70 GiB/s").
func newBytesBar(w io.Writer, total int64, opts ...progressbar.Option) *progressbar.ProgressBar {
	base := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionShowBytes(true), progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(barThrottle), progressbar.OptionSetRenderBlankState(true)}
	return progressbar.NewOptions64(total, append(base, opts...)...)
}
