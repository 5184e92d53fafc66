//go:build race

package cas

// raceDetector is whether the tests run under the race detector, whose
// sync.Pool drops a share of what it is given: allocation counts do not
// hold there.
const raceDetector = true
