// Package machine is the rule of a machine's name in a bucket store, which
// the command checks (--machine), the bucket backend keeps and the commit
// objects carry: a leaf, so that a build without buckets (the command's
// tag casckpt_lean) checks names without linking the S3 client.
package machine

import "strings"

// MaxLen bounds a machine's name, in bytes.
const MaxLen = 64

// Valid reports whether m can name a machine: 1 to MaxLen letters,
// digits, dots, dashes and underscores.
func Valid(m string) bool {
	return m != "" && len(m) <= MaxLen && strings.Trim(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}
