package web

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/casckpt/casckpt/integrations/internal/cmdline"
	"github.com/casckpt/casckpt/jsonapi"
)

// maxBody bounds a POST's body.
const maxBody = 1 << 20

// answer runs args and answers with its document: 200 on success, else
// 422 (exit 1) or 400 (exit 2) with the error's document. raw answers
// with stdout's bytes as they are (cat).
func (s *server) answer(w http.ResponseWriter, r *http.Request, args []string, raw bool) {
	s.mu.Lock()
	res := s.run(r.Context(), args)
	s.mu.Unlock()
	if res.Exit != 0 {
		status := http.StatusUnprocessableEntity
		if res.Exit == 2 {
			status = http.StatusBadRequest
		}
		writeDoc(w, status, jsonapi.Error{Error: res.Error, Exit: res.Exit})
		return
	}
	if raw {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(res.Out)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(res.Out)
}

// project reports whether the query's or body's dir is a project of the
// store (as status lists it; a project once seen is remembered, and a
// command on one that is gone since fails by itself); else it answers 404
// (or 400 for no dir) and returns false.
func (s *server) project(w http.ResponseWriter, r *http.Request, dir string) bool {
	if dir == "" {
		fail(w, http.StatusBadRequest, "refused: no dir (a project's working directory)")
		return false
	}
	if !filepath.IsAbs(dir) {
		fail(w, http.StatusNotFound, "refused: %q is not a project of this store (give its absolute working directory)", dir)
		return false
	}
	dir = filepath.Clean(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known[dir] {
		return true
	}
	res := s.run(r.Context(), []string{"status", "--json"})
	var st jsonapi.Status
	if res.Exit != 0 || json.Unmarshal(res.Out, &st) != nil {
		fail(w, http.StatusUnprocessableEntity, "status: %s", res.Error)
		return false
	}
	for _, p := range st.Projects {
		s.known[filepath.Clean(string(p.Workdir))] = true
	}
	if !s.known[dir] {
		fail(w, http.StatusNotFound, "refused: %q is not a project of this store", dir)
		return false
	}
	return true
}

func (s *server) status(w http.ResponseWriter, r *http.Request) {
	s.answer(w, r, []string{"status", "--json"}, false)
}

func (s *server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !s.project(w, r, q.Get("dir")) {
		return
	}
	n := q.Get("n")
	if _, err := strconv.Atoi(n); n != "" && err != nil {
		fail(w, http.StatusBadRequest, "refused: n %q is not a number", n)
		return
	}
	s.answer(w, r, cmdline.Command("list", cmdline.FlagIf(n != "", "-n", n), q.Get("dir")), false)
}

func (s *server) turns(w http.ResponseWriter, r *http.Request) {
	if dir := r.URL.Query().Get("dir"); s.project(w, r, dir) {
		s.answer(w, r, cmdline.Command("turns", nil, dir), false)
	}
}

func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !s.project(w, r, q.Get("dir")) {
		return
	}
	pos := []string{q.Get("dir"), q.Get("from")}
	if to := q.Get("to"); to != "" {
		pos = append(pos, to)
	}
	s.answer(w, r, cmdline.Command("diff", []string{"--patch"}, pos...), false)
}

func (s *server) log(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if s.project(w, r, q.Get("dir")) {
		s.answer(w, r, cmdline.Command("log", nil, q.Get("dir"), q.Get("path")), false)
	}
}

func (s *server) cat(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if s.project(w, r, q.Get("dir")) {
		s.answer(w, r, []string{"cat", "--", q.Get("dir"), q.Get("snap"), q.Get("path")}, true)
	}
}

// restoreBody is POST /api/restore's body.
type restoreBody struct {
	Dir    string   `json:"dir"`
	Snap   string   `json:"snap"`
	Paths  []string `json:"paths"`
	Safe   bool     `json:"safe"`
	DryRun bool     `json:"dry_run"`
}

// undoBody is POST /api/undo's body.
type undoBody struct {
	Dir    string `json:"dir"`
	Turn   string `json:"turn"`
	DryRun bool   `json:"dry_run"`
}

// snapBody is the body of POST /api/pin and /api/unpin.
type snapBody struct {
	Dir  string `json:"dir"`
	Snap string `json:"snap"`
}

// forgetBody is POST /api/forget's body.
type forgetBody struct {
	Dir    string   `json:"dir"`
	Snaps  []string `json:"snaps"`
	DryRun bool     `json:"dry_run"`
}

// decode reads r's JSON body into v (unknown fields refused, so a
// misspelt dry_run never runs for real) and checks its dir; else it
// answers and returns false.
func (s *server) decode(w http.ResponseWriter, r *http.Request, v any, dir func() string) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "malformed body: %v", err)
		return false
	}
	return s.project(w, r, dir())
}

func (s *server) restore(w http.ResponseWriter, r *http.Request) {
	var b restoreBody
	if !s.decode(w, r, &b, func() string { return b.Dir }) {
		return
	}
	f := append(cmdline.FlagIf(b.DryRun, "--dry-run"), cmdline.FlagIf(b.Safe, "--safe")...)
	s.answer(w, r, cmdline.Command("restore", f, append([]string{b.Dir, b.Snap}, b.Paths...)...), false)
}

func (s *server) undo(w http.ResponseWriter, r *http.Request) {
	var b undoBody
	if !s.decode(w, r, &b, func() string { return b.Dir }) {
		return
	}
	pos := []string{b.Dir}
	if b.Turn != "" {
		pos = append(pos, b.Turn)
	}
	s.answer(w, r, cmdline.Command("undo", cmdline.FlagIf(b.DryRun, "--dry-run"), pos...), false)
}

// pin is the handler of POST /api/pin or /api/unpin (name).
func (s *server) pin(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b snapBody
		if s.decode(w, r, &b, func() string { return b.Dir }) {
			s.answer(w, r, cmdline.Command(name, nil, b.Dir, b.Snap), false)
		}
	}
}

func (s *server) forget(w http.ResponseWriter, r *http.Request) {
	var b forgetBody
	if !s.decode(w, r, &b, func() string { return b.Dir }) {
		return
	}
	if len(b.Snaps) == 0 {
		fail(w, http.StatusBadRequest, "refused: no snaps to forget")
		return
	}
	s.answer(w, r, cmdline.Command("forget", cmdline.FlagIf(b.DryRun, "--dry-run"), append([]string{b.Dir}, b.Snaps...)...), false)
}
