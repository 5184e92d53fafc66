//go:build !casckpt_lean

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// TestMCPOversizedRequestIsRefused sends the built binary's server, through
// the official Go SDK client, a 40 MiB tool call: it is refused with a
// JSON-RPC error (not the end of the session), and the next call works.
func TestMCPOversizedRequestIsRefused(t *testing.T) {
	b := newBinEnv(t)
	dir := filepath.Join(b.home, "proj")
	writeFiles(t, dir, map[string]string{"a.txt": "a\n"})
	b.ok("snapshot", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: b.commandContext(ctx, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "checkpoint_list",
		Arguments: map[string]any{"dir": dir, "paths": strings.Repeat("x", 40<<20)}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "16 MiB") {
		t.Fatalf("a 40 MiB request: %v, want an invalid-request error naming the 16 MiB limit", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": dir}})
	if err != nil || res.IsError {
		t.Fatalf("the call after the refused one: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("casckpt mcp did not exit 0: %v", err)
	}
}

// mcpLines is an initialize handshake followed by lines, each a JSON-RPC
// message, as a client writes them.
func mcpLines(lines ...string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + strings.Join(lines, "\n") + "\n"
}

// toolCall is a tools/call request line with id.
func toolCall(id int, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// answers reads JSON-RPC responses from r until its end, by id (null: -1).
func answers(t *testing.T, r io.Reader) map[int]json.RawMessage {
	t.Helper()
	got := map[int]json.RawMessage{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var msg struct{ ID *int }
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		id := -1
		if msg.ID != nil {
			id = *msg.ID
		}
		got[id] = append(json.RawMessage(nil), sc.Bytes()...)
	}
	return got
}

// TestMCPAnswersRequestsRunningWhenStdinEnds writes tool calls to the built
// binary's server and closes stdin at once (as `casckpt mcp < requests`
// does): each call is answered with its result before the server exits 0.
func TestMCPAnswersRequestsRunningWhenStdinEnds(t *testing.T) {
	b := newBinEnv(t)
	var calls []string
	for i := range 3 {
		dir := filepath.Join(b.home, fmt.Sprintf("proj%d", i))
		writeFiles(t, dir, map[string]string{"a.txt": dir + "\n"})
		calls = append(calls, toolCall(10+i, "checkpoint_create", map[string]any{"dir": dir}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := b.commandContext(ctx, "mcp")
	c.Stdin = strings.NewReader(mcpLines(calls...))
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("casckpt mcp: %v\n%s", err, stderr.Bytes())
	}
	got := answers(t, bytes.NewReader(out))
	for i := range 3 {
		var resp struct {
			Result *struct {
				IsError           bool
				StructuredContent mcp.CreateOutput
			}
		}
		if err := json.Unmarshal(got[10+i], &resp); err != nil || resp.Result == nil || resp.Result.IsError || !resp.Result.StructuredContent.Created {
			t.Errorf("call %d: answer %s (%v), want a created checkpoint", 10+i, got[10+i], err)
		}
	}
}

// TestMCPBatches checks batches, which protocol version 2025-06-18 removed:
// in a session of that version, each request of a batch is refused with an
// error and the session goes on (the SDK would end it); in an older one, a
// batch of requests is answered with a batch, also when it holds a
// notification (which the SDK alone never answers), and a batch that reuses
// an id is refused (the SDK would end the session). Stdin ends right after
// the requests: each is answered before the server exits.
func TestMCPBatches(t *testing.T) {
	b := newBinEnv(t)
	lines := []string{
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":"x","method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":6,"method":"ping"}`,
	}
	for _, version := range []string{"2025-06-18", "2025-03-26"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := b.commandContext(ctx, "mcp")
		c.Stdin = strings.NewReader(strings.Replace(mcpLines(lines...), "2025-06-18", version, 1))
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: casckpt mcp: %v\n%s", version, err, out)
		}
		// What each id got: "result", "batch result" (in an answer that is
		// a batch) or "refused".
		got := map[string][]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var msgs []struct {
				ID     json.RawMessage
				Result json.RawMessage
				Error  *struct{ Code int }
			}
			kind := "batch result"
			if !strings.HasPrefix(l, "[") {
				l, kind = "["+l+"]", "result"
			}
			if err := json.Unmarshal([]byte(l), &msgs); err != nil {
				t.Fatalf("%s: stdout line %q: %v", version, l, err)
			}
			for _, m := range msgs {
				switch {
				case m.Error != nil && m.Error.Code == -32600:
					got[string(m.ID)] = append(got[string(m.ID)], "refused")
				case m.Error == nil:
					got[string(m.ID)] = append(got[string(m.ID)], kind)
				}
			}
		}
		want := map[string][]string{"1": {"result"}, `2`: {"batch result"}, `"x"`: {"batch result"}, "3": {"result"},
			"4": {"batch result"}, "5": {"refused", "refused"}, "6": {"result"}}
		if version == "2025-06-18" {
			want["2"], want[`"x"`], want["4"] = []string{"refused"}, []string{"refused"}, []string{"refused"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: answers by id %v, want %v:\n%s", version, got, want, out)
		}
	}
}

// TestMCPStdioHoldsTheEndForAnswers runs the server over mcpStdio with a
// tool that answers only once stdin has ended: the end reaches the SDK
// (which would cancel the call) only after the call is answered.
func TestMCPStdioHoldsTheEndForAnswers(t *testing.T) {
	release := make(chan struct{})
	srv := mcp.NewServer(func(ctx context.Context, _ []string) ([]byte, error) {
		select {
		case <-release:
			return []byte(`[]`), nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}, "/store", "test")
	var out bytes.Buffer
	stdio := newMCPStdio(&out)
	stdio.atEOF = func() { close(release) }
	in := strings.NewReader(mcpLines(toolCall(2, "checkpoint_list", map[string]any{"dir": "/p"}),
		toolCall(3, "checkpoint_turns", map[string]any{"dir": "/p"})))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Run(ctx, &sdk.IOTransport{Reader: stdio.reader(in), Writer: stdio, MaxLineLength: -1}); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("run: %v", err)
	}
	got := answers(t, &out)
	for _, id := range []int{2, 3} {
		var resp struct{ Result *struct{ IsError bool } }
		if err := json.Unmarshal(got[id], &resp); err != nil || resp.Result == nil || resp.Result.IsError {
			t.Errorf("call %d: answer %s, want a result", id, got[id])
		}
	}
}

func TestIDFinder(t *testing.T) {
	pad := strings.Repeat(`a\"b`, 1000)
	cases := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"` + pad + `"}}`, `7`},
		{`{"method":"tools/call","params":{"id":1,"x":"` + pad + `"},"jsonrpc":"2.0","id":"req-9"}`, `"req-9"`},
		{`{ "params" : {"arguments":{"id": 5}}, "id" : -3.5 }`, `-3.5`},
		{`{"method":"x","params":{"id":5,"s":"\"id\":4"}}`, ``},        // a notification: only nested ids
		{`{"idx":1,"i":2,"method":"x"}`, ``},                           // names that are not "id"
		{`{"id":{"a":1},"method":"x"}`, ``},                            // not an id
		{`{"id":"` + strings.Repeat("z", 300) + `","method":"x"}`, ``}, // too long to keep
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, ``},                // a batch
		{`{"method":"x","id":12`, ``},                                  // cut off before the id ends
	}
	for _, c := range cases {
		for _, piece := range []int{1, 7, len(c.line)} {
			f := &idFinder{}
			for s := c.line; s != ""; {
				n := min(piece, len(s))
				f.Write([]byte(s[:n]))
				s = s[n:]
			}
			if got := string(f.id()); got != c.want {
				t.Errorf("id of %.60q (pieces of %d): %q, want %q", c.line, piece, got, c.want)
			}
		}
	}
}

// TestMCPReadLineBound checks readLine at the bound: a line of max bytes
// (its newline included) is kept, one byte more is not, and the next line
// is read whole either way.
func TestMCPReadLineBound(t *testing.T) {
	const max = 100
	for _, n := range []int{max, max + 1} {
		long := `{"id":1,"p":"` + strings.Repeat("x", n-len(`{"id":1,"p":""}`)-1) + `"}` + "\n"
		r := bufio.NewReaderSize(strings.NewReader(long+"next\n"), 16)
		line, over, err := readLine(r, max)
		if err != nil || (n <= max) != (over == nil) || (over == nil && string(line) != long) {
			t.Fatalf("a line of %d bytes: %q %v %v", n, line, over, err)
		}
		if over != nil && string(over.id()) != "1" {
			t.Errorf("a line of %d bytes: id %q", n, over.id())
		}
		if line, over, err = readLine(r, max); string(line) != "next\n" || over != nil || err != nil {
			t.Fatalf("the line after: %q %v %v", line, over, err)
		}
	}
}
