package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"

	"github.com/minio/minio-go/v7"
)

// ErrTooLarge is the error of an object larger than its reader allows
// (see Store.Get).
var ErrTooLarge = errors.New("object too large")

// wrap turns an error of minio-go about what (a pack name or key) into
// one line that says what to do. A missing object matches fs.ErrNotExist,
// an object a conditional put found fs.ErrExist, a context's end its
// error, and the end of an operation its watch ended ErrNoAnswer.
func (s *Store) wrap(ctx context.Context, op, what string, err error) error {
	if silent := silence(ctx); silent != nil {
		return fmt.Errorf("s3 store: %s %s: %w", op, what, silent)
	}
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("s3 store: %s %s: %w", op, what, err)
	case errors.As(err, &netErr) || errors.As(err, &urlErr) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("s3 store: %s %s: cannot reach %s (%v): check AWS_ENDPOINT_URL and that the server is up", op, what, s.endpoint, err)
	}
	resp := errorResponse(err)
	switch {
	case resp.Code == "NoSuchBucket":
		return fmt.Errorf("s3 store: %s %s: bucket %q does not exist at %s: create it or correct the store URL", op, what, s.bucket, s.endpoint)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("s3 store: %s %s: %w", op, what, fs.ErrNotExist)
	case isPreconditionFailed(err):
		return fmt.Errorf("s3 store: %s %s: %w (the server refused a conditional put: another writer stored it first)", op, what, fs.ErrExist)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("s3 store: %s %s: %s refused access (%s): check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's policy", op, what, s.endpoint, resp.Code)
	case resp.StatusCode != 0:
		said := resp.Code
		if resp.Message != "" && resp.Message != resp.Code {
			said += ": " + resp.Message
		}
		return fmt.Errorf("s3 store: %s %s: %s answered %d (%s): try again later", op, what, s.endpoint, resp.StatusCode, said)
	}
	return fmt.Errorf("s3 store: %s %s: %v", op, what, err)
}

// isPreconditionFailed reports whether err is the server's refusal of a
// conditional request: 412, or the 409 ConditionalRequestConflict of a
// conditional put racing another write of its key.
func isPreconditionFailed(err error) bool {
	resp := errorResponse(err)
	return resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" ||
		(resp.StatusCode == http.StatusConflict && resp.Code == "ConditionalRequestConflict")
}

// isTransientConflict reports whether err is a 409 that is not a
// conditional request's refusal (see conflictRetries).
func isTransientConflict(err error) bool {
	return errorResponse(err).StatusCode == http.StatusConflict && !isPreconditionFailed(err)
}

// errorResponse returns the server's answer that err carries, or a zero
// one.
func errorResponse(err error) minio.ErrorResponse {
	var resp minio.ErrorResponse
	errors.As(err, &resp)
	return resp
}
