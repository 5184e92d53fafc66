package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// pyDir is the Python client's directory in the repository; its build
// backend, _build/casckpt_build.py, builds the wheels.
const pyDir = "clients/python"

// buildWheel has the Python client's build backend write target t's wheel
// with the binaries bin into out, and returns its name.
func buildWheel(ctx context.Context, root, out string, t target, bin binaries) (string, error) {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	const script = `import sys
sys.path.insert(0, "_build")
import casckpt_build
print(casckpt_build.build_wheel(sys.argv[1], {"binary": sys.argv[2], "companion": sys.argv[3], "platform": sys.argv[4]}))`
	cmd := exec.CommandContext(ctx, "python3", "-c", script, absOut, bin.main, bin.companion, t.wheelPlatform())
	cmd.Dir = filepath.Join(root, pyDir)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	name, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("the wheel (python3 %s/_build/casckpt_build.py): %v: %s", pyDir, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(name)), nil
}
