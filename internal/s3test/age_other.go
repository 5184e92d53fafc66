//go:build !unix

package s3test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// age moves the modification time of the file at p back by d. Without
// futimes it sets the time by name: an object written over meanwhile
// may take the older time (the tests that advance the clock run on Unix).
func age(p string, d time.Duration) error {
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // deleted meanwhile
	} else if err != nil {
		return err
	}
	if err := os.Chtimes(p, time.Now(), info.ModTime().Add(-d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("age %s: %w", p, err)
	}
	return nil
}
