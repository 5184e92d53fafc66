package s3store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas/s3store"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url            string
		bucket, prefix string
	}{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://my-bucket/team/ckpt", "my-bucket", "team/ckpt"},
		{"s3://b/p/", "b", "p"},
	} {
		c, err := s3store.ParseURL(tc.url)
		want := s3store.Config{Bucket: tc.bucket, Prefix: tc.prefix}
		if err != nil || !reflect.DeepEqual(c, want) {
			t.Errorf("parse %q: %+v %v, want %+v", tc.url, c, err, want)
		}
	}
	for _, bad := range []string{"", "b/p", "file:///x", "s3:/b", "s3://", "s3:///p", "s3://b/a//c", "s3://b/../c", "s3://b/./c", "s3://b?x=1", "s3://user@b/p", "s3://b:9000/p"} {
		if c, err := s3store.ParseURL(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse %q: %+v %v, want a one-line error", bad, c, err)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		endpoint string
		secure   bool
		err      bool
	}{
		{"", "s3.amazonaws.com", true, false},
		{"https://s3.example.com/", "s3.example.com", true, false},
		{"http://localhost:9000", "localhost:9000", false, false},
		{"localhost:9000", "", false, true},
		{"ftp://h", "", false, true},
		{"http://h/path", "", false, true},
	} {
		host, secure, err := s3store.ParseEndpoint(tc.raw)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL") {
				t.Errorf("endpoint %q: %v, want an error naming AWS_ENDPOINT_URL", tc.raw, err)
			}
			continue
		}
		if err != nil || host != tc.endpoint || secure != tc.secure {
			t.Errorf("endpoint %q: %s %v %v, want %s secure %v", tc.raw, host, secure, err, tc.endpoint, tc.secure)
		}
	}
}

// TestParseURLRedactsCredentials: credentials written into
// AWS_ENDPOINT_URL or the store URL are refused, and the error shows
// neither the user nor the password.
func TestParseURLRedactsCredentials(t *testing.T) {
	for _, endpoint := range []string{
		"http://alice:hunter2@127.0.0.1:9000",
		"https://alice:hunter2@s3.example.com/",
		"http://alice:hunter2@[::1:9000", // does not parse
		"alice:hunter2@host:9000",
	} {
		_, _, err := s3store.ParseEndpoint(endpoint)
		if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "alice") {
			t.Errorf("endpoint %q: %v, want an error without the credentials", endpoint, err)
		}
	}
	if _, err := s3store.ParseURL("s3://alice:hunter2@b/p"); err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "alice") {
		t.Errorf("store URL with credentials: %v, want an error without the credentials", err)
	}
	for raw, want := range map[string]string{
		"http://u:p@h:9/x?y@z": "http://REDACTED@h:9/x?y@z",
		"http://h:9":           "http://h:9",
		"u:p@h":                "REDACTED@h",
		"http://h/a@b":         "http://h/a@b",
	} {
		if got := s3store.Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
