#!/usr/bin/env python3
"""W1 at N cores: the curve of "W1 on 16 cores, measured" (BENCHMARKS.md, #30).

W1 is the first snapshot of a copy of GOROOT/src. This runs it through the
harness's own code (its casckpt and restic peers, run() with wait4's rusage,
a sync before each snapshot, du of the store) with the process's CPU
affinity set to the first N cores, which the snapshots inherit (as taskset
does; Go's runtime takes GOMAXPROCS from it): at each N, round by round,
each casckpt binary in the order given, then restic (in the first
RESTIC_REPS rounds). A table of medians ends the output; every sample goes
to OUT/rows.json.

usage: bench/w1cores.py TREE OUT CORES REPS RESTIC_REPS NAME=BIN [NAME=BIN...]
  e.g. bench/w1cores.py /tmp/gw/src /tmp/out 2,4,8,16 5 2 old=/tmp/a new=/tmp/b

The harness is ../shared/harness (HARNESS to override); restic is found on
PATH. On a machine without Go (the device machine of BENCHMARKS.md), carry
the harness's bench.py and gitshadow.py, the binaries, a tarball of
GOROOT/src and Debian's restic package (dpkg -x), and unpack there.
"""
import json
import os
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, os.environ.get("HARNESS", str(Path(__file__).resolve().parent.parent.parent / "shared" / "harness")))
import bench as H  # noqa: E402


def snapshot(peer, tree):
    """One W1 through peer on a fresh store: its sample and store size."""
    root = SCRATCH / f"{peer.name}-{time.monotonic_ns()}"
    H.rmtree(root)
    peer.setup(root)
    os.sync()
    s = peer.snapshot(tree, "W1 first snapshot")
    size = peer.store_size()["bytes"]
    H.rmtree(root)
    return {"wall_s": s["wall_s"], "cpu_s": s["cpu_s"], "maxrss_mib": s["maxrss_kib"] / 1024, "store_mib": size / 2**20}


def main():
    tree, out = Path(sys.argv[1]), Path(sys.argv[2])
    cores = [int(c) for c in sys.argv[3].split(",")]
    reps, rreps = int(sys.argv[4]), int(sys.argv[5])
    bins = [a.split("=", 1) for a in sys.argv[6:]]
    out.mkdir(parents=True, exist_ok=True)
    opts = SimpleNamespace(casckpt_bin=bins[0][1], scratch=str(SCRATCH), no_settle=False, reps=reps)
    rows = []
    for n in cores:
        os.sched_setaffinity(0, set(range(n)))
        for rep in range(max(reps, rreps)):
            peers = []
            if rep < reps:
                for name, binary in bins:
                    p = H.Casckpt(opts)
                    p.bin, p.variant = binary, name
                    peers.append(p)
            if rep < rreps:
                p = H.Restic(opts)
                p.variant = "restic"
                peers.append(p)
            for p in peers:
                r = dict(snapshot(p, tree), variant=p.variant, cores=n, rep=rep)
                rows.append(r)
                print(f"{n:2d} cores {r['variant']:10s} wall {r['wall_s']:.3f} s, cpu {r['cpu_s']:.2f} s, "
                      f"rss {r['maxrss_mib']:.0f} MiB, store {r['store_mib']:.1f} MiB", flush=True)
            (out / "rows.json").write_text(json.dumps(rows, indent=1))
    print("\n| cores | binary | wall s, median [range] | CPU s | peak RSS MiB, max | store MiB |\n|---|---|---|---|---|---|")
    for key in sorted({(r["cores"], r["variant"]) for r in rows}):
        rs = [r for r in rows if (r["cores"], r["variant"]) == key]
        walls = [r["wall_s"] for r in rs]
        print(f"| {key[0]} | {key[1]} | {statistics.median(walls):.3f} [{min(walls):.3f}-{max(walls):.3f}] "
              f"| {statistics.median(r['cpu_s'] for r in rs):.2f} | {max(r['maxrss_mib'] for r in rs):.0f} "
              f"| {statistics.median(r['store_mib'] for r in rs):.1f} |")


SCRATCH = Path(os.environ.get("TMPDIR", "/tmp")) / "w1cores"

if __name__ == "__main__":
    main()
