package s3store

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Config says which bucket New opens and how to reach it.
type Config struct {
	// Endpoint is the server's host[:port], without a scheme.
	Endpoint string
	// Secure selects https.
	Secure bool
	// AccessKey, SecretKey and SessionToken (may be empty) sign requests.
	AccessKey, SecretKey, SessionToken string
	// Region of the bucket; empty means minio-go asks the server once.
	Region string
	// Bucket holds the store; New does not create it.
	Bucket string
	// Prefix is the start of every key the store writes ("team/ckpt"),
	// without a leading or trailing slash; empty means the bucket's root.
	Prefix string
	// Transport carries the requests; nil means minio-go's default. Tests
	// count or alter requests through it.
	Transport http.RoundTripper
	// Probed skips the probe of conditional writes: the caller knows
	// that a former New probed this server (casckpt's cache records it).
	Probed bool
	// Progress, if set, is called with the number of bytes of packs sent
	// since its former call, from the goroutines that send them; a pack's
	// calls add up to its size, whatever minio-go retries.
	Progress func(bytes int64)
	// MaxRetries is how often minio-go tries a failed request in all;
	// 0 means its default (10), 1 no retry.
	MaxRetries int
	// Timeout is the longest an operation waits on a silent server: to
	// connect, for it to take the next bytes of a request, for its answer
	// or the answer's next bytes, or between tries. The operation then
	// fails with an error matching ErrNoAnswer. 0 means 20 seconds.
	Timeout time.Duration
}

// awsEndpoint is the server of an s3:// URL when AWS_ENDPOINT_URL is unset.
const awsEndpoint = "s3.amazonaws.com"

// ParseURL returns the Bucket and Prefix of a store URL
// "s3://BUCKET[/PREFIX]"; the caller fills in the server and credentials.
func ParseURL(storeURL string) (Config, error) {
	rest, ok := strings.CutPrefix(storeURL, "s3://")
	if !ok {
		return Config{}, fmt.Errorf("s3 store: %q is not an s3:// URL: write s3://BUCKET or s3://BUCKET/PREFIX", storeURL)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return Config{}, fmt.Errorf("s3 store: %q names no bucket: write s3://BUCKET or s3://BUCKET/PREFIX", storeURL)
	}
	if strings.ContainsAny(bucket, "?#:@") || strings.ContainsAny(prefix, "?#") {
		return Config{}, fmt.Errorf("s3 store: %q holds a query, fragment or user: write s3://BUCKET or s3://BUCKET/PREFIX", Redact(storeURL))
	}
	if prefix != "" && slices.ContainsFunc(strings.Split(prefix, "/"), func(seg string) bool { return seg == "" || seg == "." || seg == ".." }) {
		return Config{}, fmt.Errorf("s3 store: the prefix of %q has an empty, \".\" or \"..\" segment: write it as a/b/c", storeURL)
	}
	return Config{Bucket: bucket, Prefix: prefix}, nil
}

// ParseEndpoint returns the Endpoint and Secure of a server URL,
// "http://HOST:PORT" or "https://HOST" (AWS_ENDPOINT_URL); "" is
// https://s3.amazonaws.com. A URL with credentials in it is refused, and
// the error shows neither the user nor the password.
func ParseEndpoint(raw string) (host string, secure bool, err error) {
	if raw == "" {
		return awsEndpoint, true, nil
	}
	if shown := Redact(raw); shown != raw {
		return "", false, fmt.Errorf("s3 store: AWS_ENDPOINT_URL %q holds credentials: write http://HOST:PORT or https://HOST, and set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", shown)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", false, fmt.Errorf("s3 store: AWS_ENDPOINT_URL %q is not a server URL: write http://HOST:PORT or https://HOST", raw)
	}
	return u.Host, u.Scheme == "https", nil
}

// Redact returns raw, a URL or a host, with the user information before
// its host ("user:password@") replaced by "REDACTED@", whether or not it
// parses: what a message may show of AWS_ENDPOINT_URL or a store URL.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	} else {
		scheme += "://"
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	return scheme + "REDACTED@" + rest[at+1:]
}
