//go:build !casckpt_lean

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/casckpt/casckpt/jsonapi"
	"github.com/casckpt/casckpt/migrate/cline"
	"github.com/casckpt/casckpt/migrate/gemini"
	"github.com/casckpt/casckpt/migrate/gitimport"
	"github.com/casckpt/casckpt/migrate/roo"
)

// agentReader is the reader of one other agent's checkpoints (migrate
// --from-agent): its name and the functions of its package.
type agentReader struct {
	name   string
	run    func(ctx context.Context, store gitimport.Importer, dir string, opts gitimport.Options) (gitimport.Report, error)
	status func(ctx context.Context, store gitimport.Importer, dir string) ([]gitimport.UnitStatus, error)
	clear  func(ctx context.Context, store gitimport.Importer, dir string, dryRun bool) ([]string, []string, int64, error)
	// vscode: its store is under an editor's User/globalStorage, else
	// under ~/.gemini.
	vscode bool
}

// agentReaders are the readers, in the order "all" runs them.
var agentReaders = []agentReader{
	{name: "cline", run: cline.Run, status: cline.Status, clear: cline.ClearLegacy, vscode: true},
	{name: "roo", run: roo.Run, status: roo.Status, clear: roo.ClearLegacy, vscode: true},
	{name: "gemini", run: gemini.Run, status: gemini.Status, clear: gemini.ClearLegacy},
}

// agentStore is a directory to read with an agent's reader.
type agentStore struct {
	reader agentReader
	dir    string
}

// agentStores lists the directories to read for --from-agent name
// ("cline", "roo", "gemini" or "all"): path for each reader when given,
// else each reader's default locations.
func (g *globals) agentStores(name, path string) ([]agentStore, error) {
	var out []agentStore
	for _, r := range agentReaders {
		if name != "all" && name != r.name {
			continue
		}
		dirs := []string{path}
		if path == "" {
			dirs = g.agentDirs(r)
		}
		for _, d := range dirs {
			out = append(out, agentStore{reader: r, dir: d})
		}
	}
	if out == nil {
		return nil, fmt.Errorf("--from-agent %q: give cline, roo, gemini or all", name)
	}
	return out, nil
}

// agentDirs are where reader r looks by default: for Cline and Roo Code
// the User/globalStorage directory of VS Code, Cursor and Windsurf (under
// $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support
// on macOS, %APPDATA% on Windows); for Gemini CLI ~/.gemini.
func (g *globals) agentDirs(r agentReader) []string {
	if !r.vscode {
		return []string{filepath.Join(g.home(), ".gemini")}
	}
	base := g.env("XDG_CONFIG_HOME")
	switch runtime.GOOS {
	case "darwin":
		base = filepath.Join(g.home(), "Library", "Application Support")
	case "windows":
		base = g.env("APPDATA")
	}
	if base == "" {
		base = filepath.Join(g.home(), ".config")
	}
	var out []string
	for _, editor := range []string{"Code", "Cursor", "Windsurf"} {
		out = append(out, filepath.Join(base, editor, "User", "globalStorage"))
	}
	return out
}

// runAgents imports every store of stores and adds up their reports.
func runAgents(ctx context.Context, store gitimport.Importer, stores []agentStore, opts gitimport.Options) (gitimport.Report, error) {
	sum := gitimport.Report{Errors: []string{}, Sources: []gitimport.SourceReport{}}
	for _, s := range stores {
		rep, err := s.reader.run(ctx, store, s.dir, opts)
		sum.Projects += rep.Projects
		sum.SnapshotsImported += rep.SnapshotsImported
		sum.SnapshotsSkipped += rep.SnapshotsSkipped
		sum.SnapshotsUnchanged += rep.SnapshotsUnchanged
		sum.GitlinksSkipped += rep.GitlinksSkipped
		sum.NamesSkipped += rep.NamesSkipped
		sum.FilesTooLarge += rep.FilesTooLarge
		sum.Errors = append(sum.Errors, rep.Errors...)
		sum.Sources = append(sum.Sources, rep.Sources...)
		if err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// agentLegacy lists the stores of every agent found at the default
// locations, as status' legacy entries.
func (g *globals) agentLegacy(ctx context.Context, store gitimport.Importer) ([]jsonapi.Legacy, error) {
	stores, err := g.agentStores("all", "")
	if err != nil {
		return nil, err
	}
	out := []jsonapi.Legacy{}
	for _, s := range stores {
		found, err := s.reader.status(ctx, store, s.dir)
		if err != nil {
			return nil, err
		}
		for _, l := range found {
			out = append(out, jsonapi.Legacy{Agent: s.reader.name, Path: jsonapi.Path(l.Path), SizeBytes: l.SizeBytes, Migrated: l.Migrated})
		}
	}
	return out, nil
}

// clearAgents deletes the fully imported stores of stores (clear-legacy
// --from-agent) and adds up what each reader's clear did.
func clearAgents(ctx context.Context, store gitimport.Importer, stores []agentStore) (deleted, kept []string, freed int64, err error) {
	deleted, kept = []string{}, []string{}
	for _, s := range stores {
		d, k, f, err := s.reader.clear(ctx, store, s.dir, false)
		deleted, kept, freed = append(deleted, d...), append(kept, k...), freed+f
		if err != nil {
			return deleted, kept, freed, err
		}
	}
	return deleted, kept, freed, nil
}
