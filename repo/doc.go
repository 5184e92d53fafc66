// Package repo is the layer between the use cases of the root package and
// where a store keeps its data: what one store's records (index) and
// objects (cas) need from a backend, the maintenance steps that every
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
