#!/bin/sh
# barriers.sh BIN [SCRATCH]: the durability barriers (fsync, fdatasync,
# syncfs, sync_file_range, counted by strace -f -c) of each of 10 W3-like
# turns of the casckpt binary BIN: a copy of GOROOT/src/net snapshotted,
# then 3 .go files edited per turn, `snapshot --keep 20`. Prints the count
# per turn and the pack files left. SCRATCH (default a new directory under
# $TMPDIR) must be on a disk: tmpfs makes fsync free, not absent.
# BENCHMARKS.md, "A turn in two fsyncs (#30)".
set -e
BIN=$1
S=${2:-$(mktemp -d)}/barriers
rm -rf "$S"; mkdir -p "$S"; cp -r "$(go env GOROOT)/src/net" "$S/proj"
export CASCKPT_HOME="$S/store"
"$BIN" snapshot "$S/proj" --keep 20 >/dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do
	for f in dial.go ipsock.go net.go; do echo "// turn $i" >>"$S/proj/$f"; done
	strace -f -c -e trace=fsync,fdatasync,syncfs,sync_file_range -o "$S/trace" "$BIN" snapshot "$S/proj" --keep 20 >/dev/null
	awk '/fsync|fdatasync|syncfs|sync_file_range/ {n += $4} END {printf "%d ", n}' "$S/trace"
done
echo
echo "pack files: $(ls "$S/store/packs" | wc -l)"
rm -rf "$S"
