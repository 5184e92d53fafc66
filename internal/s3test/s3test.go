// Package s3test runs a real S3 server for tests: versitygw with its posix
// backend over a temporary directory, on 127.0.0.1. Start returns it with
// one empty bucket; Stop and Restart take it down and bring it back over
// the same directory and port, for fault tests; Advance moves its clock
// on, as its clients see it, without waiting.
//
// Where versitygw is found: $CASCKPT_VERSITYGW, else versitygw on PATH,
// else .tools/bin/versitygw in the repository (where .ci/test installs it).
// A test that finds none is skipped with a message saying how to install
// it.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The fixed credentials and region of every test server.
const (
	AccessKey = "casckpt-test-access"
	SecretKey = "casckpt-test-secret-key"
	Region    = "us-east-1"
)

// installHint says how to get versitygw.
const installHint = "versitygw is not installed: run GOBIN=\"$PWD/.tools/bin\" go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 in the repository (.ci/test does), or set CASCKPT_VERSITYGW to its path"

// startTimeout bounds how long a server may take to answer after start
// (a failure, not a measurement).
const startTimeout = 60 * time.Second

// Server is a running versitygw.
type Server struct {
	Endpoint  string // "127.0.0.1:PORT"
	AccessKey string
	SecretKey string
	Region    string
	Bucket    string // created empty by Start
	Dir       string // the posix backend's root: one directory per bucket

	t   testing.TB
	bin string
	log string // the server's output, appended across restarts

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start runs versitygw over a new temporary directory and creates bucket
// "casckpt" in it. It skips the test where versitygw is not installed, and
// stops the server when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	s := &Server{
		AccessKey: AccessKey,
		SecretKey: SecretKey,
		Region:    Region,
		Bucket:    "casckpt",
		Dir:       t.TempDir(),
		t:         t,
		bin:       bin,
	}
	s.log = filepath.Join(t.TempDir(), "versitygw.log")
	s.Endpoint = freeAddr(t)
	t.Cleanup(func() { s.Stop() })
	s.Restart()
	if err := s.Client(t).MakeBucket(context.Background(), s.Bucket, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("s3test: create bucket %s: %v", s.Bucket, err)
	}
	return s
}

// Binary returns the path of versitygw, or skips the test.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CASCKPT_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("s3test: CASCKPT_VERSITYGW=%s: %v", p, err)
		}
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if root, ok := repoRoot(); ok {
		p := filepath.Join(root, ".tools", "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip(installHint)
	return ""
}

// repoRoot returns the nearest directory above the working directory
// that holds go.mod.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// freeAddr returns an address on 127.0.0.1 that no one listens on now.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Restart starts the server (again) over the same directory and port,
// and waits until it answers. The server must be stopped.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		s.t.Fatal("s3test: restart of a server that runs: stop it first")
	}
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatalf("s3test: %v", err)
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, "--port", s.Endpoint, "--access", s.AccessKey, "--secret", s.SecretKey,
		"--region", s.Region, "--quiet", "posix", s.Dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("s3test: start %s: %v", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	if err := s.waitUp(done); err != nil {
		cmd.Process.Kill()
		<-done
		s.cmd = nil
		out, _ := os.ReadFile(s.log)
		s.t.Fatalf("s3test: versitygw on %s: %v; its output:\n%s", s.Endpoint, err, out)
	}
}

// waitUp polls the server until it answers HTTP, it exits, or the
// timeout passes.
func (s *Server) waitUp(exited <-chan struct{}) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get("http://" + s.Endpoint + "/")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("it exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer after %v: %v", startTimeout, err)
		}
	}
}

// Stop kills the server (SIGKILL, as a crash would) and waits until it
// has exited. It does nothing to a stopped server.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Advance moves the server's clock on by d as its clients see it, at
// once: every object stored is made d older, as if d had passed since it
// was written, and an object written later reads as written now. (The
// posix backend reports an object's Last-Modified from its file's
// modification time, which Advance moves back by d.) So gc's grace period,
// its horizon and the age of its lease, which compare the Last-Modified of
// objects, pass without a sleep. The wall clock of this machine does not
// move: a snapshot times itself by it (it re-checks gc's lists when it ran
// past half the grace period), so advance only while no snapshot is
// between its sync and its commit. It fails the test if it cannot.
func (s *Server) Advance(d time.Duration) {
	s.t.Helper()
	err := filepath.WalkDir(s.Dir, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted meanwhile
		} else if err != nil || !e.Type().IsRegular() {
			return err
		}
		return age(p, d)
	})
	if err != nil {
		s.t.Errorf("s3test: advance the clock: %v", err) // Errorf: from any goroutine
	}
}

// Client returns a minio-go client of the server, for tests that look at
// the bucket behind a store's back.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(s.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region: s.Region,
	})
	if err != nil {
		t.Fatalf("s3test: client of %s: %v", s.Endpoint, err)
	}
	return c
}

// URL returns AWS_ENDPOINT_URL for the server.
func (s *Server) URL() string { return "http://" + s.Endpoint }

// Env returns the environment variables that name the server and its
// credentials, as "KEY=value" for exec.Cmd.Env.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.URL(),
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
	}
}

// Silent returns the address ("127.0.0.1:PORT") of a server that accepts
// every connection and never answers, for tests of deadlines. It stops
// when the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: listen: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return l.Addr().String()
}

// Down returns an address on 127.0.0.1 that no one listens on: a server
// that is down.
func Down(t testing.TB) string {
	t.Helper()
	return freeAddr(t)
}
