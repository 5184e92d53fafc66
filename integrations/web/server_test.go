package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/casckpt/casckpt/integrations/web"
)

// fake is a Runner that records the command lines it runs; status lists
// the project /p.
type fake struct{ ran [][]string }

func (f *fake) run(_ context.Context, args []string) web.Result {
	f.ran = append(f.ran, args)
	if args[0] == "status" {
		return web.Result{Out: []byte(`{"projects":[{"workdir":"/p"}]}`)}
	}
	if slices.Contains(args, "#99") {
		return web.Result{Exit: 1, Error: "snapshot #99: not found"}
	}
	return web.Result{Out: []byte(`{"ran":true}`)}
}

// request sends one request to a handler for port 8080 with token "t".
func request(f *fake, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Host = "127.0.0.1:8080"
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	web.New(f.run, "t", 8080).ServeHTTP(rec, req)
	return rec
}

var bearer = map[string]string{"Authorization": "Bearer t"}

// TestEndpointsRunTheirCommandLines: each endpoint runs its command
// with --json and "--" before the positional arguments, and answers its
// output; a failed command answers 422 with the error's document.
func TestEndpointsRunTheirCommandLines(t *testing.T) {
	for _, c := range []struct {
		method, target, body string
		want                 string
	}{
		{"GET", "/api/list?dir=/p&n=5", "", "list --json -n 5 -- /p"},
		{"GET", "/api/turns?dir=/p", "", "turns --json -- /p"},
		{"GET", "/api/diff?dir=/p&from=-rf", "", "diff --json --patch -- /p -rf"},
		{"GET", "/api/diff?dir=/p&from=a&to=b", "", "diff --json --patch -- /p a b"},
		{"GET", "/api/log?dir=/p&path=x.go", "", "log --json -- /p x.go"},
		{"GET", "/api/cat?dir=/p&snap=a&path=x.go", "", "cat -- /p a x.go"},
		{"POST", "/api/restore", `{"dir":"/p","snap":"a","paths":["src"],"safe":true,"dry_run":true}`, "restore --json --dry-run --safe -- /p a src"},
		{"POST", "/api/restore", `{"dir":"/p","snap":"a"}`, "restore --json -- /p a"},
		{"POST", "/api/undo", `{"dir":"/p","turn":"t2","dry_run":true}`, "undo --json --dry-run -- /p t2"},
		{"POST", "/api/pin", `{"dir":"/p","snap":"a"}`, "pin --json -- /p a"},
		{"POST", "/api/unpin", `{"dir":"/p","snap":"a"}`, "unpin --json -- /p a"},
		{"POST", "/api/forget", `{"dir":"/p","snaps":["a","b"]}`, "forget --json -- /p a b"},
		{"POST", "/api/forget", `{"dir":"/p","snaps":["a"],"dry_run":true}`, "forget --json --dry-run -- /p a"},
	} {
		f := &fake{}
		rec := request(f, c.method, c.target, c.body, bearer)
		last := strings.Join(f.ran[len(f.ran)-1], " ")
		if rec.Code != 200 || last != c.want {
			t.Errorf("%s %s: %d, ran %q, want 200 and %q", c.method, c.target, rec.Code, last, c.want)
		}
	}
	rec := request(&fake{}, "POST", "/api/restore", `{"dir":"/p","snap":"#99"}`, bearer)
	if rec.Code != 422 || rec.Body.String() != `{"error":"snapshot #99: not found","exit":1}`+"\n" {
		t.Errorf("failed command: %d %s", rec.Code, rec.Body)
	}
}

// TestRefusedRequestsRunNothing: a refused request runs no command (a
// project check runs status alone).
func TestRefusedRequestsRunNothing(t *testing.T) {
	for _, c := range []struct {
		name, method, target, body string
		header                     map[string]string
		want                       int
	}{
		{"no token", "POST", "/api/undo", `{"dir":"/p"}`, nil, 401},
		{"token in the query", "POST", "/api/undo?token=t", `{"dir":"/p"}`, nil, 401},
		{"wrong cookie", "POST", "/api/undo", `{"dir":"/p"}`, map[string]string{"Cookie": web.CookieName + "=x"}, 401},
		{"foreign host", "POST", "/api/undo", `{"dir":"/p"}`, map[string]string{"Authorization": "Bearer t", "Host": "attacker.example:8080"}, 403},
		{"other port", "POST", "/api/undo", `{"dir":"/p"}`, map[string]string{"Authorization": "Bearer t", "Host": "127.0.0.1:8081"}, 403},
		{"foreign origin", "POST", "/api/undo", `{"dir":"/p"}`, map[string]string{"Authorization": "Bearer t", "Origin": "https://attacker.example"}, 403},
		{"GET undo", "GET", "/api/undo?dir=/p", "", bearer, 405},
		{"POST list", "POST", "/api/list?dir=/p", "", bearer, 405},
		{"unknown project", "POST", "/api/undo", `{"dir":"/q"}`, bearer, 404},
		{"unknown field", "POST", "/api/undo", `{"dir":"/p","dryrun":true}`, bearer, 400},
		{"no snaps", "POST", "/api/forget", `{"dir":"/p","snaps":[]}`, bearer, 400},
		{"bad n", "GET", "/api/list?dir=/p&n=x", "", bearer, 400},
		{"unknown endpoint", "GET", "/api/gc", "", bearer, 404},
	} {
		f := &fake{}
		rec := request(f, c.method, c.target, c.body, c.header)
		ran := slices.ContainsFunc(f.ran, func(a []string) bool { return a[0] != "status" })
		if rec.Code != c.want || ran {
			t.Errorf("%s: %d, ran %q; want %d and nothing run", c.name, rec.Code, f.ran, c.want)
		}
	}
}

// TestPageSetsTheCookie: the page's URL token sets an HttpOnly,
// SameSite=Strict cookie and the page forbids outside requests.
func TestPageSetsTheCookie(t *testing.T) {
	rec := request(&fake{}, "GET", "/?token=t", "", map[string]string{"Host": "localhost:8080"})
	c := rec.Result().Cookies()
	if rec.Code != 200 || len(c) != 1 || c[0].Value != "t" || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("page: %d, cookies %v", rec.Code, c)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	if !strings.Contains(rec.Body.String(), "<title>casckpt</title>") {
		t.Error("not the page")
	}
	if !strings.Contains(csp, "script-src 'self' 'unsafe-inline';") {
		t.Errorf("CSP %q: scripts from elsewhere allowed", csp)
	}
	// The one src= is the vendored highlighter, served by this server.
	body := strings.Replace(rec.Body.String(), `<script src="/vendor/highlight.js" async id="highlighter"></script>`, "", 1)
	if body == rec.Body.String() {
		t.Error("the page does not load /vendor/highlight.js")
	}
	for _, external := range []string{"http:", "https:", "src=", "href=", "url(", "@import"} {
		if strings.Contains(body, external) {
			t.Errorf("the page has %q: everything must be embedded", external)
		}
	}
	if rec := request(&fake{}, "GET", "/api/status", "", map[string]string{"Cookie": web.CookieName + "=t"}); rec.Code != 200 {
		t.Errorf("status with the cookie: %d", rec.Code)
	}
}

// TestHighlighterIsServed: the vendored highlight.js is served, as
// JavaScript, to a request with the token alone (the page's cookie), and
// makes no request of its own (no network API in it).
func TestHighlighterIsServed(t *testing.T) {
	rec := request(&fake{}, "GET", "/vendor/highlight.js", "", map[string]string{"Cookie": web.CookieName + "=t"})
	js := rec.Body.String()
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("highlight.js: %d, %q", rec.Code, rec.Header())
	}
	if !strings.Contains(js, "highlight.js 11.12.0") || !strings.Contains(js, "BSD 3-Clause License") || !strings.Contains(js, "window.hljs = hljs;") {
		t.Error("not the vendored highlight.js with its licence")
	}
	for _, network := range []string{"fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "importScripts", "createElement(\"script"} {
		if strings.Contains(js, network) {
			t.Errorf("highlight.js has %q: it must make no request", network)
		}
	}
	for _, c := range []struct {
		name, method, target string
		header               map[string]string
		want                 int
	}{
		{"no token", "GET", "/vendor/highlight.js", nil, 401},
		{"token in the query", "GET", "/vendor/highlight.js?token=t", nil, 401},
		{"foreign host", "GET", "/vendor/highlight.js", map[string]string{"Cookie": web.CookieName + "=t", "Host": "attacker.example:8080"}, 403},
		{"POST", "POST", "/vendor/highlight.js", map[string]string{"Cookie": web.CookieName + "=t"}, 405},
		{"another file", "GET", "/vendor/LICENSE", map[string]string{"Cookie": web.CookieName + "=t"}, 404},
	} {
		if rec := request(&fake{}, c.method, c.target, "", c.header); rec.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, rec.Code, c.want)
		}
	}
}
