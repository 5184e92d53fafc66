// Package repo is the layer between the use cases of the root package and
// where a store keeps its data: a Repo is one store's records (index),
// objects (cas), lock and Backend, and an operation runs under a Hold of
// its lock (Repo.Begin); the package also holds what the records and
// objects need from a backend, the maintenance steps that every
// backend shares (the roots a collection marks, the snapshots it drops,
// what a writer may deduplicate against), and the Backend seam.
//
// A Backend owns what really differs between a store in a directory and
// one in a bucket: the journal that makes the records durable (the
// database itself, or commit objects, markers and pins that a cache
// applies), reclaiming space (a sweep now, or pending lists and a grace
// period on the server's clock), rebuilding the records, and the Features
// that the use cases ask about instead of asking which backend they run
// on. The directory backend is Local; the bucket backend is repo/bucket.
package repo
