package main

import (
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/casckpt/casckpt"
)

// isRef reports whether s has the shape of a snapshot reference (hex digits
// @N or #N) and is not an existing directory, which the user more likely meant.
func isRef(s string) bool {
	if casckpt.Ref(s).Validate() != nil {
		return false
	}
	st, err := os.Stat(s)
	return err != nil || !st.IsDir()
}

// splitDir takes the optional leading DIR off args, of which at least min
// must remain: the first argument is DIR when more than min were given and
// it is not a reference.
func splitDir(args []string, min int) (dir string, rest []string) {
	if len(args) > min && !isRef(args[0]) {
		return args[0], args[1:]
	}
	return ".", args
}

// splitDirExact is splitDir for the command whose cobra Use line is use,
// which takes exactly n arguments after the optional DIR: an argument it
// would not use is a usage error that quotes the command's synopsis.
func splitDirExact(use string, args []string, n int) (dir string, rest []string, err error) {
	dir, rest = splitDir(args, n)
	if len(rest) > n {
		name, synopsis, _ := strings.Cut(use, " ")
		return "", nil, usagef("%s takes %s; unexpected argument %q", name, synopsis, rest[n])
	}
	return dir, rest, nil
}

// mebibytes converts the value of a MiB flag to bytes, refusing one that is
// negative (below min) or too large to count in bytes.
func mebibytes(flag string, n, min int64) (int64, error) {
	if n < min || n > math.MaxInt64>>20 {
		return 0, usagef("--%s takes a number of MiB from %d to %d", flag, min, int64(math.MaxInt64>>20))
	}
	return n << 20, nil
}

// maxDays is the longest span in days a time.Duration holds.
const maxDays = math.MaxInt64 / int64(24*time.Hour)

// days converts the value of a flag counting days to a duration, refusing
// one that is negative or too large.
func days(flag string, n int) (time.Duration, error) {
	if n < 0 || int64(n) > maxDays {
		return 0, usagef("--%s takes a number of days from 0 to %d", flag, maxDays)
	}
	return time.Duration(n) * 24 * time.Hour, nil
}

// hours converts the value of a flag counting hours to a duration, refusing
// one that is negative, not a number, or too large.
func hours(flag string, h float64) (time.Duration, error) {
	const most = float64(math.MaxInt64/int64(time.Hour)) - 1
	if !(h >= 0 && h <= most) { // also refuses NaN
		return 0, usagef("--%s takes a number of hours from 0 to %d", flag, int64(most))
	}
	return time.Duration(h * float64(time.Hour)), nil
}

// The times casckpt can record: it stores them as nanoseconds since 1970
// in an int64.
var (
	earliestTime = time.Unix(0, math.MinInt64).UTC()
	latestTime   = time.Unix(0, math.MaxInt64).UTC()
)

// parseNow reads CASCKPT_NOW: an RFC 3339 time that casckpt can record.
func parseNow(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usagef("CASCKPT_NOW=%q is not an RFC 3339 time (like 2026-01-02T15:04:05Z)", v)
	}
	if t.Before(earliestTime) || t.After(latestTime) {
		return time.Time{}, usagef("CASCKPT_NOW=%q is outside the times casckpt can record: from %s to %s",
			v, earliestTime.Truncate(time.Second).Add(time.Second).Format(time.RFC3339), latestTime.Truncate(time.Second).Format(time.RFC3339))
	}
	return t, nil
}

// argsBetween is a cobra.PositionalArgs that takes lo to hi arguments
// (hi < 0: any number from lo): a wrong count is a usage error of one
// line that names what is missing or unexpected, with the command's
// synopsis.
func argsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		name, synopsis, _ := strings.Cut(cmd.Use, " ")
		switch {
		case len(args) < lo:
			missing := required(synopsis)
			missing = missing[min(len(args), len(missing)):]
			if len(missing) == 0 {
				missing = []string{"more arguments"}
			}
			return usagef("%s needs %s: %s %s", name, strings.Join(missing, " and "), name, synopsis)
		case hi == 0 && len(args) > 0:
			return usagef("%s takes no arguments; unexpected argument %q", name, args[0])
		case hi > 0 && len(args) > hi:
			return usagef("%s takes %s; unexpected argument %q", name, synopsis, args[hi])
		}
		return nil
	}
}

// required returns the arguments a synopsis requires, in order: its words
// before the first flag that are not [optional] ("SNAP..." gives "SNAP").
func required(synopsis string) []string {
	var out []string
	for _, w := range strings.Fields(synopsis) {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[-") {
			break
		}
		if !strings.HasPrefix(w, "[") {
			out = append(out, strings.TrimSuffix(w, "..."))
		}
	}
	return out
}

// changedFlags names the flags of cmd that its command line gave.
func changedFlags(cmd *cobra.Command) map[string]bool {
	given := map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { given[f.Name] = true })
	return given
}

// checkLabel refuses (exit 2) value, of flag, when the command line gave
// it (given names the flags it gave) and it is no valid session or turn
// ID: 1 to 128 bytes of printable UTF-8.
func checkLabel(given map[string]bool, flag, value string) error {
	if !given[flag] {
		return nil
	}
	if err := casckpt.CheckLabel(value); err != nil {
		return usagef("--%s: %v", flag, err)
	}
	return nil
}
