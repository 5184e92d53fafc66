//go:build linux

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkHookPreToolUse: casckpt hook claude-code on a PreToolUse (a
// Write into the unchanged W1 tree), a process per event as Claude Code
// runs it, beside W2 through the command (the contract's bound: under 2x).
// first is the prompt's first tool call in the tree (it snapshots the
// unchanged tree to start the turn there; each prompt is submitted in
// another project, untimed); again is a later one in the same prompt (it
// finds the turn started and takes no snapshot).
func BenchmarkHookPreToolUse(b *testing.B) {
	skipShort(b)
	tree := w1Tree(b)
	cwd := b.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("notes\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	store := filepath.Join(b.TempDir(), "store")
	runBinary(b, "--store", store, "snapshot", tree)
	runBinary(b, "--store", store, "snapshot", tree) // past the racy window
	settle()
	prompt := 0
	submit := func() {
		prompt++
		hookEvent(b, store, fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"p%d"}`, cwd, prompt))
	}
	pre := fmt.Sprintf(`{"session_id":"s","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":%q,"content":"x"}}`,
		cwd, filepath.Join(tree, "fmt", "new.go"))
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			submit()
			b.StartTimer()
			hookEvent(b, store, pre)
		}
	})
	b.Run("again", func(b *testing.B) {
		submit()
		hookEvent(b, store, pre)
		for b.Loop() {
			hookEvent(b, store, pre)
		}
	})
	b.Run("w2-cmd", func(b *testing.B) {
		for b.Loop() {
			runBinary(b, "--store", store, "snapshot", tree)
		}
	})
	if data, _ := os.ReadFile(filepath.Join(store, "hook.log")); len(data) > 0 {
		b.Fatalf("the hook logged failures:\n%s", data)
	}
}

// hookEvent runs casckpt hook claude-code on store with event on stdin.
func hookEvent(b *testing.B, store, event string) {
	cmd := exec.Command(casckptBinary(b), "--store", store, "hook", "claude-code")
	cmd.Env = []string{"HOME=" + b.TempDir()}
	cmd.Stdin = strings.NewReader(event)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		b.Fatalf("hook: %v\n%s", err, out)
	}
}
