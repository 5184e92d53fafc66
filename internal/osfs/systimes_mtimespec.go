//go:build darwin || freebsd || netbsd

package osfs

import "syscall"

// sysTimes returns the modification and change times of st, in
// nanoseconds (the standard library names them Mtimespec and Ctimespec
// here).
func sysTimes(st *syscall.Stat_t) (mtime, ctime int64) {
	return st.Mtimespec.Nano(), st.Ctimespec.Nano()
}
