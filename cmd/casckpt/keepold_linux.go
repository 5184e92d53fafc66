package main

import (
	"os"
	"syscall"
)

// releaseName is the argv[0] of the process release starts: main returns
// at once when it is all its command line (and ps shows what it is for).
const releaseName = "casckpt: freeing the files a restore replaced"

// releasing reports whether this process is one that release started.
func releasing() bool { return len(os.Args) == 1 && os.Args[0] == releaseName }

// release hands the files held to a new process of this program, in a
// session of its own, which exits at once: the kernel frees their blocks
// as that process exits, after this one has answered. Where it cannot be
// started, they are closed here, their blocks freed now.
func (k *keptFiles) release() {
	if k == nil || len(k.files) == 0 {
		return
	}
	defer k.closeAll() // this process's copies; the new one holds its own
	exe, err := os.Executable()
	if err != nil {
		return
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return
	}
	defer null.Close()
	fds := []uintptr{null.Fd(), null.Fd(), null.Fd()}
	for _, f := range k.files {
		if f, ok := f.(interface{ Fd() uintptr }); ok {
			fds = append(fds, f.Fd())
		}
	}
	_, _ = syscall.ForkExec(exe, []string{releaseName}, &syscall.ProcAttr{Env: []string{}, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true}})
}
