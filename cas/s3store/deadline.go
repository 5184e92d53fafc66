package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// defaultTimeout is Config.Timeout's default.
const defaultTimeout = 20 * time.Second

// ErrNoAnswer is the error of an operation that the server kept silent
// through for the store's timeout (Config.Timeout).
var ErrNoAnswer = errors.New("no answer")

// A watch is the deadline of one operation of the store (a GET, a
// listing, a PUT with minio-go's retries of it): it ends the operation,
// with an error matching ErrNoAnswer as its context's cause, once the
// server has kept silent for the store's timeout, whether the operation
// waits to connect, for the server to take the next bytes of a request,
// for an answer, for its next bytes, or between minio-go's tries. The
// work of the operation's caller (a listing's callback) does not count.
type watch struct {
	timeout time.Duration
	timer   *time.Timer
	cancel  context.CancelCauseFunc

	mu     sync.Mutex
	paused bool
}

type watchKey struct{}

// watch starts the deadline of an operation on the context it returns,
// which the operation makes its requests with; the caller stops it when
// the operation ends.
func (s *Store) watch(ctx context.Context) (context.Context, *watch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watch{timeout: s.timeout, cancel: cancel}
	silent := fmt.Errorf("%w from %s in %v: check AWS_ENDPOINT_URL and that the server is up (CASCKPT_S3_TIMEOUT sets the wait)", ErrNoAnswer, s.endpoint, s.timeout)
	w.timer = time.AfterFunc(s.timeout, func() { cancel(silent) })
	return context.WithValue(ctx, watchKey{}, w), w
}

// heard restarts the deadline: the server answered or moved bytes.
func (w *watch) heard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.paused {
		w.timer.Reset(w.timeout)
	}
}

// pause stops the deadline while the operation's caller works; resume
// starts it again, whole.
func (w *watch) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = true
	w.timer.Stop()
}

func (w *watch) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused = false
	w.timer.Reset(w.timeout)
}

// stop ends the deadline and the operation's context.
func (w *watch) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// silence returns the cause of ctx's end if its watch ended it, else nil.
func silence(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrNoAnswer) {
		return cause
	}
	return nil
}

// watchedTransport tells the watch of each request's operation when the
// server answers and when bytes of the request or of the answer move.
type watchedTransport struct{ base http.RoundTripper }

func (t watchedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w, _ := req.Context().Value(watchKey{}).(*watch)
	if w == nil {
		return t.base.RoundTrip(req)
	}
	if req.Body != nil && req.Body != http.NoBody {
		req = req.Clone(req.Context())
		req.Body = &watchedBody{req.Body, w}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	w.heard()
	resp.Body = &watchedBody{resp.Body, w}
	return resp, nil
}

// watchedBody is a body whose reads tell a watch that bytes moved.
type watchedBody struct {
	io.ReadCloser
	w *watch
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.heard()
	}
	return n, err
}
