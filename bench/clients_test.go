//go:build linux

package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// clientArm is a client library of a host language in
// BenchmarkClientW3, driven through a driver program that takes W3's
// turns through it. A driver is started once per round as
//
//	PROG ARGS... STORE
//
// in this directory, with CASCKPT_BIN (the binary under test), HOME and
// PATH set, and env added; it reads one line per turn on stdin,
// {"dir", "reason", "keep"}, takes that turn's checkpoint through the
// client as a host does, and answers one line, {"ok", "error", "cpu_s"}:
// cpu_s the CPU seconds it, the casckpt processes it waited for and a
// resident server have used so far. The time of a turn is from the
// request's write to the answer's read. Adding a client is one entry.
type clientArm struct {
	name string
	prog string   // the program, found on PATH (the arm is left out without it)
	args []string // its arguments before STORE
	env  []string // more environment
	// needs is a file the driver needs, relative to this directory
	// (the arm is left out without it); "" for none.
	needs string
}

// clientArms are the clients of BenchmarkClientW3.
var clientArms = []clientArm{
	{"python-resident", "python3", []string{"testdata/client_w3.py", "resident"}, []string{"PYTHONPATH=../clients/python"}, ""},
	{"python-process", "python3", []string{"testdata/client_w3.py", "process"}, []string{"PYTHONPATH=../clients/python"}, ""},
	// The TypeScript client as built by npm ci (or npm run build) in clients/typescript.
	{"ts-resident", "node", []string{"testdata/client_w3.mjs", "resident"}, nil, tsClient},
	{"ts-process", "node", []string{"testdata/client_w3.mjs", "process"}, nil, tsClient},
}

// tsClient is the TypeScript client's build, which its arms need.
const tsClient = "../clients/typescript/dist/index.js"

// BenchmarkClientW3: W3 (40 turns on the src/net + src/crypto project, a
// checkpoint with keep 20 after each; CASCKPT_W3_TURNS sets how many)
// through each client of clientArms, resident and a process per call,
// beside the git shadow store (and the command, casckpt-cmd, a process
// per snapshot), every peer on its own copy with the same edits,
// interleaved turn by turn. Steps: W3-turn (median), W3-turn-p95; the
// table's ratio is git's over each peer's.
func BenchmarkClientW3(b *testing.B) {
	skipShort(b)
	casckptBinary(b)
	names := clientPeerNames(b)
	turns := envInt("CASCKPT_W3_TURNS", 40)
	s := newSamples()
	s.base = "git"
	for round := range reps() {
		var sides []*w3Side
		for _, n := range rotate(names, round) {
			sides = append(sides, &w3Side{p: newClientOrHostPeer(b, n), dir: w3Project(b), rng: rand.New(rand.NewPCG(3, 40))})
		}
		settle()
		for _, sd := range sides {
			sd.p.snapshot(sd.dir, "initial", 20)
		}
		for turn := range turns {
			for _, sd := range rotate(sides, turn) {
				w3Turn(b, s, sd, turn)
			}
		}
		for _, sd := range sides {
			s.add("W3-turn", sd.p.name, summarize(sd.turns, 0.5))
			s.add("W3-turn-p95", sd.p.name, summarize(sd.turns, 0.95))
			if sd.p.close != nil {
				sd.p.close()
			}
			os.RemoveAll(sd.p.store)
			os.RemoveAll(sd.dir)
		}
	}
	s.report(b)
}

// clientPeerNames are the peers of BenchmarkClientW3: git, casckpt-cmd
// and the client arms whose program is installed, narrowed by
// CASCKPT_BENCH_PEERS.
func clientPeerNames(b *testing.B) []string {
	supported := []string{"git", "casckpt-cmd"}
	for _, arm := range clientArms {
		if _, err := exec.LookPath(arm.prog); err != nil {
			b.Logf("%s is not installed: the %s peer is left out", arm.prog, arm.name)
			continue
		}
		if _, err := os.Stat(arm.needs); arm.needs != "" && err != nil {
			b.Logf("%s is missing (npm ci in its package builds it): the %s peer is left out", arm.needs, arm.name)
			continue
		}
		supported = append(supported, arm.name)
	}
	return peerNames(b, supported...)
}

// newClientOrHostPeer is the client arm called name, else the host peer.
func newClientOrHostPeer(b *testing.B, name string) *hostPeer {
	if i := slices.IndexFunc(clientArms, func(a clientArm) bool { return a.name == name }); i >= 0 {
		return clientPeer(b, clientArms[i], filepath.Join(b.TempDir(), "store"))
	}
	return newHostPeer(b, name)
}

// clientPeer starts arm's driver on store; its snapshot is one turn
// through the driver, and its CPU time what the driver reports.
func clientPeer(b *testing.B, arm clientArm, store string) *hostPeer {
	cmd := exec.Command(arm.prog, append(slices.Clone(arm.args), store)...)
	cmd.Env = append([]string{"CASCKPT_BIN=" + casckptBinary(b), "HOME=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}, arm.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s: %v", arm.name, err)
	}
	b.Cleanup(func() {
		if cmd.ProcessState == nil { // a failed turn ended the benchmark
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	out := bufio.NewReader(outPipe)
	m := &procMeter{}
	var cpuSoFar time.Duration
	p := &hostPeer{name: arm.name, store: store, procs: m}
	p.snapshot = func(dir, reason string, keep int) {
		req, _ := json.Marshal(map[string]any{"dir": dir, "reason": reason, "keep": keep})
		var ans struct {
			OK    bool    `json:"ok"`
			Error string  `json:"error"`
			CPU   float64 `json:"cpu_s"`
		}
		if _, err := in.Write(append(req, '\n')); err != nil {
			b.Fatalf("%s: %v\n%s", arm.name, err, stderr.String())
		}
		line, err := out.ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &ans)
		}
		if err != nil || !ans.OK {
			b.Fatalf("%s: turn in %s: %v %s\n%s", arm.name, dir, err, ans.Error, stderr.String())
		}
		cpu := time.Duration(ans.CPU * float64(time.Second))
		m.cpu += cpu - cpuSoFar
		cpuSoFar = cpu
	}
	p.close = func() {
		in.Close()
		io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			b.Errorf("%s: %v\n%s", arm.name, err, stderr.String())
		}
	}
	return p
}
