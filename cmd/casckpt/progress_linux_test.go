package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/casckpt/casckpt/internal/s3test"
)

// slowBody is a request body read at 4 MiB/s at most.
type slowBody struct {
	io.ReadCloser
	start time.Time
	n     int64
}

func (b *slowBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p[:min(len(p), 64<<10)])
	b.n += int64(n)
	time.Sleep(time.Duration(b.n)*time.Second/(4<<20) - time.Since(b.start))
	return n, err
}

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// snapshotOnTerminal runs casckpt with args, its stderr on a terminal, and
// returns its stdout and what it drew on the terminal.
func snapshotOnTerminal(t *testing.T, b *binEnv, args ...string) (stdout, terminal string) {
	t.Helper()
	return runOnTerminal(t, b, false, args...)
}

// runOnTerminal runs the built casckpt with args, its stdout (onStdout) or
// its stderr on a terminal, and returns what it wrote on the other stream
// and what it drew on the terminal.
func runOnTerminal(t *testing.T, b *binEnv, onStdout bool, args ...string) (other, terminal string) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	c := b.command(args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, slave
	if onStdout {
		c.Stdout, c.Stderr = slave, &out
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	drawn := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master) // EIO once the command has exited
		drawn <- b
	}()
	if err := c.Wait(); err != nil {
		t.Fatalf("casckpt %q: %v: %s", args, err, out.String())
	}
	return out.String(), string(<-drawn)
}

// TestS3SnapshotShowsUpload: a first snapshot into a bucket, its stderr on
// a terminal, shows the bytes uploaded; with --json, or off a terminal,
// nothing is drawn.
func TestS3SnapshotShowsUpload(t *testing.T) {
	b := newBinEnv(t)
	srv := s3test.Start(t)
	s3Env(t, b, srv)
	// A link of 4 MiB/s: the upload lasts long enough for the bar, which
	// redraws at most every 100 ms, to show it.
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = &slowBody{ReadCloser: r.Body, start: time.Now()}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	b.extra = append(b.extra, "AWS_ENDPOINT_URL="+slow.URL) // the last one counts
	dir := t.TempDir()
	data := make([]byte, 9<<20) // incompressible: more than one pack
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, drawn := snapshotOnTerminal(t, b, "snapshot", dir)
	t.Logf("drawn: %q", drawn)
	if !strings.Contains(drawn, " uploaded") || !strings.Contains(out, "created ") {
		t.Fatalf("a first snapshot on a terminal drew %q, printed %q; want the bytes uploaded drawn", drawn, out)
	}
	b.extra = b.extra[:len(b.extra)-1] // the fast link again
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644)
	out, drawn = snapshotOnTerminal(t, b, "snapshot", dir, "--json")
	if drawn != "" || !strings.HasPrefix(out, "{") {
		t.Fatalf("a snapshot with --json drew %q on the terminal, printed %q", drawn, out)
	}
	rand.Read(data)
	os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644)
	if r := b.ok("snapshot", dir); r.err != "" {
		t.Fatalf("a snapshot off a terminal wrote %q on stderr", r.err)
	}
}
