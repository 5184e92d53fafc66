package s3store_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/casckpt/casckpt/cas/packtest"
	"github.com/casckpt/casckpt/cas/s3store"
	"github.com/casckpt/casckpt/internal/s3test"
)

// stallingServer answers every request with headers and the first bytes
// of a body of 1 MiB, then keeps silent.
func stallingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1048576")
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"0123"`)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("CKCOMMIT"))
		w.(http.Flusher).Flush()
		<-release
	})}
	go srv.Serve(l)
	t.Cleanup(func() { close(release); srv.Close() })
	return l.Addr().String()
}

// quietConfig is the config of a store at addr that waits 50 ms on a
// silent server.
func quietConfig(addr string) s3store.Config {
	return s3store.Config{Endpoint: addr, AccessKey: "k", SecretKey: "s", Region: "us-east-1", Bucket: "casckpt", Probed: true, Timeout: 50 * time.Millisecond}
}

// TestSilentServer: every kind of operation on a server that accepts
// connections and never answers, or that stops in the middle of an
// answer, ends with an error matching ErrNoAnswer that names the server,
// in one line.
func TestSilentServer(t *testing.T) {
	ctx := context.Background()
	for name, addr := range map[string]string{"silent": s3test.Silent(t), "stalling": stallingServer(t)} {
		s := open(t, quietConfig(addr))
		ops := map[string]func() error{
			"get":  func() error { _, err := s.Get(ctx, "commits/x", 1<<20); return err },
			"put":  func() error { return s.PutNew(ctx, "commits/x", []byte("x")) },
			"list": func() error { return s.ListAfter(ctx, "commits/", "", func(string) error { return nil }) },
			"tail": func() error { _, err := s.ReadTail(ctx, packtest.NewName(), 1000, 16); return err },
			"read": func() error {
				r, err := s.OpenSized(ctx, packtest.NewName(), 1000)
				if err == nil {
					_, err = r.ReadAt(make([]byte, 10), 0)
				}
				return err
			},
			"upload": func() error {
				w, err := s.Create(ctx, packtest.NewName())
				if err == nil {
					w.Write([]byte("pack"))
					err = closeSync(s, w)
				}
				return err
			},
		}
		for op, f := range ops {
			err := f()
			if name == "stalling" && (op == "list" || op == "put" || op == "upload") {
				// Answered at once (a bad listing, a PUT taken): not silence.
				continue
			}
			if !errors.Is(err, s3store.ErrNoAnswer) || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s server: %s: %v, want a one-line ErrNoAnswer naming %s", name, op, err, addr)
			}
		}
	}
}

// TestDownServer: a closed port ends an operation within the timeout
// too, whatever minio-go's tries.
func TestDownServer(t *testing.T) {
	addr := s3test.Down(t)
	s := open(t, quietConfig(addr))
	if _, err := s.Get(context.Background(), "commits/x", 100); err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("get from a closed port: %v", err)
	}
}
