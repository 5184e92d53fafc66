package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/casckpt/casckpt/integrations/web"
	"github.com/casckpt/casckpt/jsonapi"
)

// uiOptions are ui's flags.
type uiOptions struct {
	port   int
	noOpen bool
}

func newUICommand(g *globals) *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui [DIR]",
		Short: "serve a local web page (and HTTP API) of the store's turns, diffs and undo",
		Long: `ui serves on 127.0.0.1 (a free port unless --port) a web page of the
store's projects, turns, snapshots, diffs and file histories, with restore,
undo, pin and forget, and the same as a JSON API (docs/http.md). When ready
it prints the page's URL, which carries a random token
(http://127.0.0.1:PORT/?token=T; with DIR, the page opens on that project);
with --json it prints {"url", "port", "token"} instead. It opens the URL in
a browser unless --no-open or there is no display. Every request needs the
token and must come to the server's own host; no store lock is held between
requests, so a second ui (or any command) works beside it. SIGINT or
SIGTERM stops it (exit 0) once the command in progress has finished.`,
		Args: argsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error { return runUI(cmd.Context(), g, o, args) },
	}
	cmd.Flags().IntVar(&o.port, "port", 0, "listen on this port of 127.0.0.1 (default: a free one)")
	cmd.Flags().BoolVar(&o.noOpen, "no-open", false, "do not open the page in a browser")
	return cmd
}

// runUI serves the page until ctx ends (a signal: exit 0).
func runUI(ctx context.Context, g *globals, o uiOptions, args []string) error {
	if o.port < 0 || o.port > 65535 {
		return usageError{fmt.Errorf("--port %d: give 1 to 65535 (or 0 for a free port)", o.port)}
	}
	store, err := absStore(g.storeDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	token, err := newToken()
	if err != nil {
		ln.Close()
		return err
	}
	link := "http://127.0.0.1:" + strconv.Itoa(port) + "/?token=" + token
	if len(args) == 1 {
		dir, err := filepath.Abs(args[0])
		if err != nil {
			ln.Close()
			return err
		}
		link += "&dir=" + url.QueryEscape(dir)
	}
	run := func(ctx context.Context, args []string) web.Result {
		out, oc := runInProcess(ctx, g, store, g.env, args)
		return web.Result{Exit: oc.code, Out: out, Error: oc.msg}
	}
	srv := &http.Server{Handler: web.New(run, token, port), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if err := g.emit(jsonapi.UI{URL: link, Port: port, Token: token}, func(w io.Writer) { fmt.Fprintln(w, link) }); err != nil {
		srv.Close()
		return err
	}
	if !o.noOpen {
		openBrowser(g, link)
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// The command in progress finishes (a restore is never cut short),
	// then ui exits 0.
	return srv.Shutdown(context.WithoutCancel(ctx))
}

// newToken is 32 random hex digits.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// openBrowser opens link in the user's browser when there is a display; a
// failure only warns.
func openBrowser(g *globals, link string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		if g.env("DISPLAY") == "" && g.env("WAYLAND_DISPLAY") == "" {
			return
		}
		cmd = exec.Command("xdg-open", link)
	}
	if err := cmd.Start(); err != nil {
		g.warn("could not open a browser: " + err.Error() + "; open " + link)
		return
	}
	go cmd.Wait()
}
