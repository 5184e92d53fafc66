// Package web is casckpt's local web page and its HTTP API (casckpt ui):
// a handler that answers each /api endpoint with exactly the document the
// matching command prints with --json, run through a Runner that the
// caller (cmd/casckpt) gives, and serves one embedded page (HTML, CSS and
// JavaScript; no external request of any kind) that drives that API, with
// the vendored highlight.js (page/vendor) that colours its code.
//
// Every request must come to the server's own Host (127.0.0.1:PORT or
// localhost:PORT) with no foreign Origin (else 403, against DNS
// rebinding and cross-site requests) and carry the token (a Bearer
// header, or the cookie that the page's URL ?token= sets; else 401).
// State-changing endpoints are POSTs (else 405). A dir must be a project
// of the store (else 404); paths are resolved by the commands, which
// refuse one outside the project. See docs/http.md.
package web
