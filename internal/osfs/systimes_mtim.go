//go:build linux || openbsd || dragonfly || solaris || illumos

package osfs

import "syscall"

// sysTimes returns the modification and change times of st, in
// nanoseconds (the standard library names them Mtim and Ctim here).
func sysTimes(st *syscall.Stat_t) (mtime, ctime int64) {
	return st.Mtim.Nano(), st.Ctim.Nano()
}
