package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt"
)

// projectArg is a command's DIR resolved to its project.
type projectArg struct {
	dir string // what the store is given: DIR, or the project that holds it
	sub string // DIR's place in that project, slash-separated; "" when DIR is it
}

// openProject opens the store and resolves dir as git resolves a
// subdirectory to its repository: a directory inside a project the store
// knows is that project, unless it is itself one or --here was given.
func (g *globals) openProject(ctx context.Context, dir string) (*casckpt.Store, projectArg, error) {
	store, err := g.open()
	if err != nil || g.here {
		return store, projectArg{dir: dir}, err
	}
	workdir, sub, found, err := store.EnclosingProject(ctx, dir)
	if err != nil || !found || sub == "" {
		return store, projectArg{dir: dir}, err
	}
	return store, projectArg{dir: workdir, sub: sub}, nil
}

// path turns p, a PATH argument given relative to DIR (or absolute), into
// a path the store takes: relative to the project, or absolute.
func (p projectArg) path(s string) string {
	if p.sub == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(filepath.FromSlash(p.sub), s)
}

// paths is path of each of ps.
func (p projectArg) paths(ps []string) []string {
	out := make([]string, len(ps))
	for i, s := range ps {
		out[i] = p.path(s)
	}
	return out
}

// addHereFlag gives cmd, which takes a DIR, the --here flag.
func addHereFlag(cmd *cobra.Command, g *globals) {
	cmd.Flags().BoolVar(&g.here, "here", false, "take DIR (default .) as its own project even when it is inside a project the store knows")
}
