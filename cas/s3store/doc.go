// Package s3store is a cas.PackStore in a bucket of an S3-compatible object
// store (AWS S3, MinIO, versitygw, ...), through minio-go.
//
// Vocabulary:
//   - The prefix is the part of the object keys the store owns:
//     s3://BUCKET/PREFIX keeps its packs under "PREFIX/packs/", its packs
//     set aside under "PREFIX/damaged/", and its probe objects directly
//     under "PREFIX/".
//   - A conditional put is a PUT with "If-None-Match: *": the server stores
//     the object only if no object of that key exists, and answers 412
//     Precondition Failed otherwise. It is what keeps many writers on many
//     machines from overwriting one another without a lock.
//   - The probe is what New does first: it puts one fresh object twice
//     with If-None-Match: * and refuses the server if the second put is
//     not refused (a server that ignores conditional writes).
//
// Requests per call (what the store makes; minio-go's retries of a failed
// request come on top): Create 0; a writer's Close 0, and the upload it
// starts 1 PUT (plus 1 HEAD when the server answers 412, to tell a retried
// PUT of its own bytes from another writer's pack); Open 1 HEAD; ReadAt at most 1 ranged GET, of
// the 1 MiB blocks that hold its range and are not in the store's 64 MiB
// block cache (0 past the end); Stat 1 HEAD; List 1 per 1000 objects; Remove 1 HEAD + 1 DELETE;
// SetAside 1 server-side COPY + 1 DELETE; Sync 0; RemoveIncomplete 1
// listing, plus a listing of parts and an abort per stale upload; New 3
// (the probe: 2 PUTs and 1 DELETE), 0 with Config.Probed. Beside the packs
// (objects.go): PutNew 1 PUT (+1 HEAD on a 412); Get 1 GET; Delete 1
// DELETE; ListAfter 1 per 1000 keys; ReadTail 1 ranged GET.
//
// Caveats:
//   - A writer keeps its pack in memory (in 1 MiB pieces; a pack is about
//     cas.PackTargetSize, 8 MiB) until Close, which hands it to the store's
//     uploads: up to 4 packs are sent at once, each in one PUT, and a Close
//     that finds 4 in flight waits for one to end. Sync waits for them all
//     and returns the first failure (a failure also fails the next Close,
//     so that a writer stops at once). Open, Stat, Remove and SetAside of a
//     pack being sent wait for its upload, List for every upload, so the
//     store's callers see a pack once its Close returned nil. A writer that
//     dies leaves nothing in the bucket.
//   - Config.Progress reports the bytes of packs sent, as minio-go reads
//     them, each byte once.
//   - Nothing under packs/ is ever overwritten. A pack set aside twice under
//     one name (removed, made again, damaged again) replaces the first
//     damaged copy: cas never reuses a name.
//   - Sync sends nothing: a PUT, COPY or DELETE that returned is durable.
//   - Reads are bound to the object's ETag at Open: a pack removed and
//     written again under its name fails the reads of readers opened
//     before, instead of mixing bytes of the two. A pack shorter than the
//     size a reader was opened with reads as cas.ErrCorrupt.
//   - Every operation has a deadline of silence (Config.Timeout): it fails
//     with ErrNoAnswer once the server has said nothing for that long, to
//     connect, to take a request, to answer, or between minio-go's tries.
//   - Get reads at most the limit its caller gives (ErrTooLarge past it,
//     found from the answer's size before the body is read).
package s3store
