//go:build unix

package s3test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// age moves the modification time of the file at p back by d. It changes
// the file it opened, so that an object written over meanwhile (a new file
// renamed over it) keeps the time of its write.
func age(p string, d time.Duration) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted meanwhile
	} else if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	mtime := syscall.NsecToTimeval(info.ModTime().Add(-d).UnixNano())
	atime := syscall.NsecToTimeval(time.Now().UnixNano())
	if err := syscall.Futimes(int(f.Fd()), []syscall.Timeval{atime, mtime}); err != nil {
		return fmt.Errorf("age %s: %w", p, err)
	}
	return nil
}
