package casckpt_test

import (
	"context"
	"testing"

	"github.com/casckpt/casckpt"
)

func BenchmarkZZW2(b *testing.B) {
	ctx := context.Background()
	s, _ := casckpt.Open("/tmp/w1store", casckpt.Options{})
	for b.Loop() {
		s.Snapshot(ctx, "/tmp/w1src", casckpt.SnapshotOptions{})
	}
}
