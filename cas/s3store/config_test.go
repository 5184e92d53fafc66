package s3store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/cas/s3store"
)

func TestParseURL(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://127.0.0.1:7070",
		"AWS_ACCESS_KEY_ID":     "key",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_REGION":            "eu-west-3",
	}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		url            string
		bucket, prefix string
	}{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://my-bucket/team/ckpt", "my-bucket", "team/ckpt"},
		{"s3://b/p/", "b", "p"},
	} {
		c, err := s3store.ParseURL(tc.url, getenv)
		want := s3store.Config{Endpoint: "127.0.0.1:7070", AccessKey: "key", SecretKey: "secret", Region: "eu-west-3", Bucket: tc.bucket, Prefix: tc.prefix}
		if err != nil || !reflect.DeepEqual(c, want) {
			t.Errorf("parse %q: %+v %v, want %+v", tc.url, c, err, want)
		}
	}
	for _, bad := range []string{"", "b/p", "file:///x", "s3:/b", "s3://", "s3:///p", "s3://b/a//c", "s3://b/../c", "s3://b/./c", "s3://b?x=1", "s3://user@b/p", "s3://b:9000/p"} {
		if c, err := s3store.ParseURL(bad, getenv); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("parse %q: %+v %v, want a one-line error", bad, c, err)
		}
	}
}

func TestParseURLEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		endpoint string
		secure   bool
		err      string
	}{
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}, "s3.amazonaws.com", true, ""},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "https://s3.example.com/"}, "s3.example.com", true, ""},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://localhost:9000"}, "localhost:9000", false, ""},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k"}, "", false, "AWS_SECRET_ACCESS_KEY"},
		{map[string]string{"AWS_SECRET_ACCESS_KEY": "s"}, "", false, "AWS_ACCESS_KEY_ID"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "localhost:9000"}, "", false, "AWS_ENDPOINT_URL"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "ftp://h"}, "", false, "AWS_ENDPOINT_URL"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://h/path"}, "", false, "AWS_ENDPOINT_URL"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_MAX_ATTEMPTS": "0"}, "", false, "AWS_MAX_ATTEMPTS"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_MAX_ATTEMPTS": "x"}, "", false, "AWS_MAX_ATTEMPTS"},
		{map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s", "AWS_MAX_ATTEMPTS": "2"}, "s3.amazonaws.com", true, ""},
	} {
		c, err := s3store.ParseURL("s3://b/p", func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("env %v: %+v %v, want an error naming %s", tc.env, c, err, tc.err)
			}
			continue
		}
		if err != nil || c.Endpoint != tc.endpoint || c.Secure != tc.secure {
			t.Errorf("env %v: %+v %v, want endpoint %s secure %v", tc.env, c, err, tc.endpoint, tc.secure)
		}
	}
}

// TestParseURLRedactsCredentials: credentials written into
// AWS_ENDPOINT_URL or the store URL are refused, and the error shows
// neither the user nor the password.
func TestParseURLRedactsCredentials(t *testing.T) {
	env := map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}
	for _, tc := range []struct{ store, endpoint string }{
		{"s3://b/p", "http://alice:hunter2@127.0.0.1:9000"},
		{"s3://b/p", "https://alice:hunter2@s3.example.com/"},
		{"s3://b/p", "http://alice:hunter2@[::1:9000"}, // does not parse
		{"s3://b/p", "alice:hunter2@host:9000"},
		{"s3://alice:hunter2@b/p", ""},
	} {
		env["AWS_ENDPOINT_URL"] = tc.endpoint
		_, err := s3store.ParseURL(tc.store, func(k string) string { return env[k] })
		if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "alice") {
			t.Errorf("store %q, endpoint %q: %v, want an error without the credentials", tc.store, tc.endpoint, err)
		}
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
