//go:build !race

package cas

// raceDetector: see race_test.go.
const raceDetector = false
