// Package statcache defines the stat cache's records and the stamps that
// let a scan recognise an unchanged file by lstat alone. The scan reads and
// makes them; the index stores them (package index holds their encoding).
//
// Vocabulary:
//   - A Dir is the record of one directory of a project: the tree it had at
//     the last scan, a hash of its entries' names and kinds, a stamp per
//     entry and the tree of each subdirectory.
//   - A stamp condenses what lstat says of a file (size, times, inode,
//     mode) or a link's target into 64 bits.
//
// Caveats: a file modified within RacyWindow of the scan that recorded it
// (FineWindow on a local file system with nanosecond times) is "racily
// clean" and its stamp never matches, so it is read again.
package statcache
