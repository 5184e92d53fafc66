package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/casckpt/casckpt"
)

// bucketOptions completes opts for an s3:// store from the environment,
// which only the command reads (docs/commands.md, "Bucket stores"): the
// server and its credentials (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_MAX_ATTEMPTS),
// the wait on a silent server (CASCKPT_S3_TIMEOUT, or opts.S3Timeout if
// shorter), gc's grace period and horizon (CASCKPT_GC_GRACE,
// CASCKPT_GC_HORIZON), the machine and the fleet key (CASCKPT_MACHINE,
// CASCKPT_FLEET_KEY).
func (g *globals) bucketOptions(opts casckpt.Options) (casckpt.Options, error) {
	opts.S3 = casckpt.S3Server{
		Endpoint:     g.env("AWS_ENDPOINT_URL"),
		AccessKey:    g.env("AWS_ACCESS_KEY_ID"),
		SecretKey:    g.env("AWS_SECRET_ACCESS_KEY"),
		SessionToken: g.env("AWS_SESSION_TOKEN"),
		Region:       g.env("AWS_REGION"),
	}
	if v := g.env("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return opts, fmt.Errorf("s3 store: AWS_MAX_ATTEMPTS %q is not a number of tries from 1 to 100", v)
		}
		opts.S3.MaxAttempts = n
	}
	timeout, err := g.envDuration("CASCKPT_S3_TIMEOUT")
	if err != nil {
		return opts, err
	}
	if timeout > 0 && (opts.S3Timeout == 0 || timeout < opts.S3Timeout) {
		opts.S3Timeout = timeout
	}
	if opts.GCGrace == 0 {
		if opts.GCGrace, err = g.envDuration("CASCKPT_GC_GRACE"); err != nil {
			return opts, err
		}
	}
	if opts.GCHorizon, err = g.envDuration("CASCKPT_GC_HORIZON"); err != nil {
		return opts, err
	}
	opts.Machine, opts.FleetKey = g.env("CASCKPT_MACHINE"), g.env("CASCKPT_FLEET_KEY")
	opts.CacheDir, err = g.cacheRoot()
	return opts, err
}

// envDuration returns the Go duration in variable name; 0 when it is
// unset.
func (g *globals) envDuration(name string) (time.Duration, error) {
	v := g.env(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive Go duration (like 1h or 30s)", name, v)
	}
	return d, nil
}
