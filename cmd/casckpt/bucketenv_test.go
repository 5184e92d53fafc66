package main

import "testing"

// TestBucketEnvironmentRefused: the command reads the variables of a
// bucket store, and a bad value fails it with one line that names the
// variable, before any request.
func TestBucketEnvironmentRefused(t *testing.T) {
	for name, value := range map[string]string{
		"AWS_MAX_ATTEMPTS":   "0",
		"CASCKPT_S3_TIMEOUT": "soon",
		"CASCKPT_GC_GRACE":   "-1s",
		"CASCKPT_GC_HORIZON": "a week",
	} {
		e := newEnv(t)
		e.vars["CASCKPT_HOME"] = "s3://bucket/p"
		e.vars["AWS_ACCESS_KEY_ID"], e.vars["AWS_SECRET_ACCESS_KEY"] = "key", "secret"
		e.vars[name] = value
		failsWith(t, e.run("list"), 1, name)
	}
}
