package main

import (
	"testing"
)

// TestCachedCountsThroughTheBinary: list and turns print the same JSON
// when they compute the change counts and when they read them from the
// cache their first run filled.
func TestCachedCountsThroughTheBinary(t *testing.T) {
	b := newBinEnv(t)
	dir := t.TempDir()
	steps := []struct {
		files map[string]string
		args  []string
	}{
		{map[string]string{"a.txt": "1\n"}, []string{"--turn", "t1"}},
		{map[string]string{"a.txt": "1\n2\n", "b.txt": "b\n"}, nil},
		{map[string]string{"a.txt": "2\n3\n4\n"}, []string{"--turn", "t1", "--end-turn"}},
		{map[string]string{"c.txt": "c\nc\n"}, []string{"--turn", "t2"}},
	}
	for _, st := range steps {
		writeFiles(t, dir, st.files)
		b.ok(append([]string{"snapshot", dir}, st.args...)...)
	}
	for _, cmd := range [][]string{{"list", dir, "--json"}, {"turns", dir, "--json"}} {
		fresh := b.ok(cmd...).out
		cached := b.ok(cmd...).out
		if fresh != cached {
			t.Fatalf("%v computed:\n%s\nfrom the cache:\n%s", cmd, fresh, cached)
		}
	}
	if list := jsonOf[[]map[string]any](t, b.ok("list", dir, "--json").out); len(list) != 4 || list[0]["insertions"] != 2.0 || list[2]["files_changed"] != 2.0 {
		t.Fatalf("list: %v", list)
	}
	// t1 ran over two snapshots: its counts are no pair list computed.
	if turns := jsonOf[[]map[string]any](t, b.ok("turns", dir, "--json").out); len(turns) != 2 || turns[1]["files_changed"] != 2.0 || turns[1]["insertions"] != 4.0 || turns[1]["deletions"] != 1.0 {
		t.Fatalf("turns: %v", turns)
	}
}
