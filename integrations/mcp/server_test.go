package mcp_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/casckpt/casckpt/integrations/mcp"
)

// connect serves run's tools to an in-memory client.
func connect(t *testing.T, run mcp.Runner) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(run, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestArgumentsNeverBecomeFlags checks the command lines the tools run:
// flags first, then "--", so a path or reference starting with - stays
// a positional argument, and the dry run is the default.
func TestArgumentsNeverBecomeFlags(t *testing.T) {
	var got [][]string
	cs := connect(t, func(_ context.Context, args []string) ([]byte, error) {
		got = append(got, args)
		return nil, errors.New("stop here")
	})
	calls := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"checkpoint_restore", map[string]any{"dir": "-d", "snap": "--safe", "paths": []string{"-x"}},
			[]string{"restore", "--json", "--dry-run", "--", "-d", "--safe", "-x"}},
		{"checkpoint_restore", map[string]any{"dir": "/p", "snap": "@1", "dry_run": false, "safe": true},
			[]string{"restore", "--json", "--safe", "--", "/p", "@1"}},
		{"checkpoint_undo", map[string]any{"dir": "/p"}, []string{"undo", "--json", "--dry-run", "--", "/p"}},
		{"checkpoint_create", map[string]any{"dir": "/p", "message": "-m", "max_size_mb": 0},
			[]string{"snapshot", "--json", "-m", "-m", "--max-size-mb", "0", "--", "/p"}},
		{"checkpoint_list", map[string]any{"dir": "/p", "n": 3}, []string{"list", "--json", "-n", "3", "--", "/p"}},
	}
	for _, c := range calls {
		got = nil
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError {
			t.Fatalf("%s: %v %+v", c.tool, err, res)
		}
		if len(got) != 1 || !slices.Equal(got[0], c.want) {
			t.Errorf("%s %v ran %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// TestFailuresAreToolErrors checks that a command's error, a document
// with a field the tool's output lacks, and a panic are tool errors, and
// that the server keeps serving.
func TestFailuresAreToolErrors(t *testing.T) {
	outputs := []func() ([]byte, error){
		func() ([]byte, error) { return nil, errors.New("no snapshot ffff: casckpt list shows them") },
		func() ([]byte, error) { return []byte(`[{"id":"x","new_field":1}]`), nil },
		func() ([]byte, error) { panic("boom") },
		func() ([]byte, error) { return []byte(`[]`), nil },
	}
	i := 0
	cs := connect(t, func(context.Context, []string) ([]byte, error) { i++; return outputs[i-1]() })
	wants := []string{"no snapshot ffff", "new_field", "boom"}
	for _, want := range wants {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": "/p"}})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, want) {
			t.Fatalf("want a tool error naming %q, got %v %+v", want, err, res)
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "checkpoint_list", Arguments: map[string]any{"dir": "/p"}})
	if err != nil || res.IsError {
		t.Fatalf("the server does not serve after the failures: %v %+v", err, res)
	}
	if got := res.StructuredContent.(map[string]any)["snapshots"]; got == nil {
		t.Fatalf("an empty list is %v, want []", res.StructuredContent)
	}
}
