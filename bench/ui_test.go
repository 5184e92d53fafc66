//go:build linux

package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkUIRender: casckpt ui's page in Debian's headless chromium
// (playwright-core from cmd/casckpt/testdata/ui-e2e) on a project of
// 1,000 snapshots whose newest changed 2,000 files: timeline-ms, from the
// page's load to its timeline's first page of rows, and diff-ms, from a
// click on that snapshot to its diff's files (the first page of them).
// Skipped without node, chromium or playwright-core.
func BenchmarkUIRender(b *testing.B) {
	const chromium = "/usr/bin/chromium"
	pw, err := filepath.Abs("../cmd/casckpt/testdata/ui-e2e/node_modules/playwright-core/index.mjs")
	if err != nil {
		b.Fatal(err)
	}
	node, err := exec.LookPath("node")
	for _, need := range []string{chromium, pw} {
		if _, serr := os.Stat(need); serr != nil || err != nil {
			b.Skip("needs node, chromium and npm ci in cmd/casckpt/testdata/ui-e2e")
		}
	}
	bin, home, dir := casckptBinary(b), b.TempDir(), b.TempDir()
	env := []string{"HOME=" + home}
	serve := exec.Command(bin, "serve")
	serve.Env = env
	in, _ := serve.StdinPipe()
	outPipe, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		b.Fatal(err)
	}
	out := bufio.NewReader(outPipe)
	snapshot := func(reason string) {
		req, _ := json.Marshal(map[string]any{"id": 1, "args": []string{"snapshot", dir, "--keep", "2000", "-m", reason}})
		fmt.Fprintf(in, "%s\n", req)
		line, err := out.ReadString('\n')
		if err != nil || !strings.Contains(line, `"exit":0`) {
			b.Fatalf("snapshot: %v %s", err, line)
		}
	}
	for i := range 2000 {
		os.MkdirAll(filepath.Join(dir, fmt.Sprint("d", i/100)), 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprint("d", i/100), fmt.Sprint("f", i, ".go")), []byte("package d\n\nfunc F() int { return 1 }\n"), 0o644)
	}
	for i := range 999 {
		os.WriteFile(filepath.Join(dir, "counter.txt"), []byte(fmt.Sprint(i, "\n")), 0o644)
		snapshot(fmt.Sprint("step ", i))
	}
	for i := range 2000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprint("d", i/100), fmt.Sprint("f", i, ".go")), []byte("package d\n\nfunc F() int { return 2 }\n"), 0o644)
	}
	snapshot("two thousand files")
	in.Close()
	serve.Wait()

	ui := exec.Command(bin, "ui", "--json", "--no-open", dir)
	ui.Env = env
	uiOut, _ := ui.StdoutPipe()
	if err := ui.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { ui.Process.Kill(); ui.Wait() }()
	var ready struct{ URL string }
	if line, err := bufio.NewReader(uiOut).ReadBytes('\n'); err != nil || json.Unmarshal(line, &ready) != nil {
		b.Fatalf("ui: %v %s", err, line)
	}
	b.ResetTimer()
	for range b.N {
		run := exec.Command(node, "testdata/ui_render.mjs")
		run.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "PLAYWRIGHT=" + pw, "CHROMIUM=" + chromium, "UI_URL=" + ready.URL, "DIFF_REASON=two thousand files"}
		res, err := run.Output()
		var r struct {
			TimelineMS float64 `json:"timeline_ms"`
			DiffMS     float64 `json:"diff_ms"`
			Rows       int
			Files      int
		}
		if err != nil || json.Unmarshal(res, &r) != nil {
			b.Fatalf("render: %v %s", err, res)
		}
		b.ReportMetric(r.TimelineMS, "timeline-ms")
		b.ReportMetric(r.DiffMS, "diff-ms")
		b.ReportMetric(float64(r.Rows), "rows")
		b.ReportMetric(float64(r.Files), "files-shown")
	}
}
