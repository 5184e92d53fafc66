package testtree

import (
	"os"
	"testing"
)

// SoakEnv is the environment variable that asks the long tests (the crash
// loop, the fault and full-disk sweeps) for the soak: more iterations and
// finer steps than the default run, which the README's test command keeps
// within minutes on two cores. .ci/test -soak sets it; CI runs both.
const SoakEnv = "CASCKPT_SOAK"

// Soak reports whether this run is the soak (CASCKPT_SOAK=1).
func Soak() bool { return os.Getenv(SoakEnv) == "1" }

// Size picks a long test's size: soak in the soak, short under go test
// -short, else def. Every size must still run every kind of step the
// test checks; the soak only runs more of them.
func Size[T any](short, def, soak T) T {
	switch {
	case Soak():
		return soak
	case testing.Short():
		return short
	}
	return def
}
