//go:build linux

package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// samples collects, over a host-path benchmark's rounds, the usage of
// each timed step by peer and the other figures (sizes, exactness), and
// reports their medians.
type samples struct {
	steps  []string                        // in the order first seen
	peers  map[string][]string             // step: peers in the order first seen
	usage  map[string]map[string][]usage   // step, peer: one per round
	values map[string]map[string][]float64 // name, peer: one per round
	names  []string                        // value names in the order first seen
	// base is the peer the others are compared with (casckpt-cmd).
	base string
}

func newSamples() *samples {
	return &samples{base: "casckpt-cmd", peers: map[string][]string{}, usage: map[string]map[string][]usage{}, values: map[string]map[string][]float64{}}
}

// add records one round of step by peer.
func (s *samples) add(step, peer string, u usage) {
	if s.usage[step] == nil {
		s.steps = append(s.steps, step)
		s.usage[step] = map[string][]usage{}
	}
	if s.usage[step][peer] == nil {
		s.peers[step] = append(s.peers[step], peer)
	}
	s.usage[step][peer] = append(s.usage[step][peer], u)
}

// value records one round of a figure (name carries its unit, as
// "W1-store-MiB-du").
func (s *samples) value(name, peer string, v float64) {
	if s.values[name] == nil {
		s.names = append(s.names, name)
		s.values[name] = map[string][]float64{}
	}
	s.values[name][peer] = append(s.values[name][peer], v)
}

// summarize returns the p-th percentile of each of wall, CPU and RSS.
func summarize(us []usage, p float64) usage {
	var wall, cpu, rss []time.Duration
	for _, u := range us {
		wall, cpu, rss = append(wall, u.wall), append(cpu, u.cpu), append(rss, time.Duration(u.rssKiB))
	}
	return usage{wall: percentile(wall, p), cpu: percentile(cpu, p), rssKiB: int64(percentile(rss, p))}
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// report reports every median as a metric (STEP-ms/PEER, STEP-cpu-ms/PEER,
// STEP-rss-MiB/PEER for processes, NAME/PEER for values) and prints
// one table on standard output, with the ratios of the base peer to each
// other peer.
func (s *samples) report(b *testing.B) {
	var t strings.Builder
	fmt.Fprintf(&t, "medians of %d rounds; ratio: %s / peer (wall, CPU)\n", s.rounds(), s.base)
	fmt.Fprintf(&t, "%-24s %-16s %10s %10s %8s %14s\n", "step", "peer", "wall ms", "CPU ms", "RSS MiB", "ratio")
	for _, step := range s.steps {
		med := map[string]usage{}
		for _, p := range s.peers[step] {
			med[p] = summarize(s.usage[step][p], 0.5)
		}
		for _, p := range s.peers[step] {
			u := med[p]
			b.ReportMetric(ms(u.wall), step+"-ms/"+p)
			b.ReportMetric(ms(u.cpu), step+"-cpu-ms/"+p)
			rss := ""
			if u.rssKiB > 0 {
				b.ReportMetric(float64(u.rssKiB)/1024, step+"-rss-MiB/"+p)
				rss = fmt.Sprintf("%.1f", float64(u.rssKiB)/1024)
			}
			ratio := ""
			if c, ok := med[s.base]; ok && p != s.base && u.wall > 0 && u.cpu > 0 {
				ratio = fmt.Sprintf("%.3gx, %.3gx", float64(c.wall)/float64(u.wall), float64(c.cpu)/float64(u.cpu))
			}
			fmt.Fprintf(&t, "%-24s %-16s %10.1f %10.1f %8s %14s\n", step, p, ms(u.wall), ms(u.cpu), rss, ratio)
		}
	}
	for _, name := range s.names {
		var row []string
		for _, p := range sortedKeys(s.values[name]) {
			v := medianOf(s.values[name][p])
			b.ReportMetric(v, name+"/"+p)
			row = append(row, fmt.Sprintf("%s %.4g", p, v))
		}
		fmt.Fprintf(&t, "%-30s %s\n", name, strings.Join(row, ", "))
	}
	// On standard output: the testing package keeps only the first ten
	// lines a benchmark logs.
	fmt.Printf("--- table %s\n%s", b.Name(), t.String())
}

// rounds is the most rounds any step recorded.
func (s *samples) rounds() int {
	n := 0
	for _, byPeer := range s.usage {
		for _, us := range byPeer {
			n = max(n, len(us))
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// printSlope prints, for each step of peer, its median wall time, CPU
// time and peak RSS at each point (a store's projects, a tree's files),
// and each of its other figures: how the cost grows.
func printSlope(what string, points []int, ss []*samples, peer string) {
	var t strings.Builder
	fmt.Fprintf(&t, "--- slope of %s over %s (wall ms / CPU ms / RSS MiB)\n%-30s", peer, what, "step")
	for _, n := range points {
		fmt.Fprintf(&t, " %22s", fmt.Sprint(what, "=", n))
	}
	t.WriteString("\n")
	for _, step := range ss[0].steps {
		fmt.Fprintf(&t, "%-30s", step)
		for _, s := range ss {
			u := summarize(s.usage[step][peer], 0.5)
			fmt.Fprintf(&t, " %22s", fmt.Sprintf("%.1f / %.1f / %.1f", ms(u.wall), ms(u.cpu), float64(u.rssKiB)/1024))
		}
		t.WriteString("\n")
	}
	for _, name := range ss[0].names {
		fmt.Fprintf(&t, "%-30s", name)
		for _, s := range ss {
			if v := s.values[name][peer]; len(v) > 0 {
				fmt.Fprintf(&t, " %22.4g", medianOf(v))
			}
		}
		t.WriteString("\n")
	}
	fmt.Print(t.String())
}
