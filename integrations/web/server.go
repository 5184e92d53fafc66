package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/casckpt/casckpt/jsonapi"
)

//go:embed page/index.html page/vendor/highlight.js
var page embed.FS

// csp is the page's Content-Security-Policy: scripts from the page and
// this server alone (the vendored highlight.js), requests to this server
// alone.
const csp = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"

// Result is what one command line run in-process gave.
type Result struct {
	Exit  int    // the exit status
	Out   []byte // stdout: the --json document, or cat's bytes
	Error string // the error's one line without "casckpt: " ("" on success)
}

// Runner runs a casckpt command line (without the program's name; the
// arguments carry --json where a document is wanted) and returns what it
// gave.
type Runner func(ctx context.Context, args []string) Result

// CookieName is the cookie that carries the token once the page's URL
// has given it.
const CookieName = "casckpt_token"

// server answers the page and the API on one port.
type server struct {
	run   Runner
	token string
	hosts [2]string       // the Host values accepted
	mu    sync.Mutex      // runs one command at a time; guards known
	known map[string]bool // the projects status listed so far
}

// New is the handler of the page and the API for a server listening on
// 127.0.0.1:port whose requests must carry token; run runs the commands,
// one at a time.
func New(run Runner, token string, port int) http.Handler {
	p := strconv.Itoa(port)
	s := &server{run: run, token: token, known: map[string]bool{}, hosts: [2]string{"127.0.0.1:" + p, "localhost:" + p}}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.page)
	mux.Handle("/vendor/highlight.js", only(http.MethodGet, http.HandlerFunc(highlighter)))
	for name, h := range map[string]http.HandlerFunc{
		"status": s.status, "list": s.list, "turns": s.turns, "diff": s.diff, "log": s.log, "cat": s.cat,
	} {
		mux.Handle("/api/"+name, only(http.MethodGet, h))
	}
	for name, h := range map[string]http.HandlerFunc{
		"restore": s.restore, "undo": s.undo, "pin": s.pin("pin"), "unpin": s.pin("unpin"), "forget": s.forget,
	} {
		mux.Handle("/api/"+name, only(http.MethodPost, h))
	}
	return s.guard(mux)
}

// guard refuses a request to another Host or from another Origin (403)
// and one without the token (401), except the page's own GET with
// ?token=, which sets the cookie.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != s.hosts[0] && r.Host != s.hosts[1] {
			fail(w, http.StatusForbidden, "refused: Host %q is not this server's", r.Host)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+s.hosts[0] && o != "http://"+s.hosts[1] {
			fail(w, http.StatusForbidden, "refused: Origin %q is not this server's", o)
			return
		}
		if !s.authorized(r) {
			fail(w, http.StatusUnauthorized, "refused: no valid token (open the URL casckpt ui printed)")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the token: a Bearer header, the
// cookie, or (for the page alone) ?token=.
func (s *server) authorized(r *http.Request) bool {
	var given string
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = h
	} else if c, err := r.Cookie(CookieName); err == nil {
		given = c.Value
	}
	if given == "" && r.URL.Path == "/" {
		given = r.URL.Query().Get("token")
	}
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) == 1
}

// only answers 405 to a request whose method is not method (GET also
// allows HEAD).
func only(method string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method && (method != http.MethodGet || r.Method != http.MethodHead) {
			w.Header().Set("Allow", method)
			fail(w, http.StatusMethodNotAllowed, "refused: %s needs %s", r.URL.Path, method)
			return
		}
		h(w, r)
	})
}

// page serves the embedded page and sets the token's cookie.
func (s *server) page(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", http.MethodGet)
		fail(w, http.StatusMethodNotAllowed, "refused: the page needs GET")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	body, _ := page.ReadFile("page/index.html")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", csp)
	w.Write(body)
}

// highlighter serves the vendored highlight.js (page/vendor/README.md).
func highlighter(w http.ResponseWriter, r *http.Request) {
	body, _ := page.ReadFile("page/vendor/highlight.js")
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Write(body)
}

// fail answers status with an Error document.
func fail(w http.ResponseWriter, status int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	exit := 1
	if status == http.StatusBadRequest {
		exit = 2
	}
	writeDoc(w, status, jsonapi.Error{Error: msg, Exit: exit})
}

// writeDoc answers status with v as JSON.
func writeDoc(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
