// Package bench measures casckpt against the git shadow store that agent
// hosts use today (and restic, where installed) on the workloads of
// ../shared/PERF.md. Every other file is a test file: run
//
//	go test ./bench -run '^$' -bench . -benchtime 1x
//
// and see BENCHMARKS.md for what each benchmark reports. They build for
// Linux only: they read rusage, /proc and the kernel's caches.
package bench
