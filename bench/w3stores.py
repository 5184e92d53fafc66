#!/usr/bin/env python3
"""W3 with the stores kept, for "where the bytes are" (BENCHMARKS.md, #30).

The harness (../shared/harness/bench.py) deletes each W3 store once it is
measured. This runs the same workload through the harness's own code
(agent_turn, the casckpt and git-shadow peers, du -sk) on twin copies of
GOROOT's net and crypto, one per casckpt binary (and one for the git shadow
store with --git), the binaries taking turns in a rotating order, and keeps
every store under OUT/<peer>/store.

usage: bench/w3stores.py OUT SEED BIN [BIN...] [--git] [--trace]
  --trace  also records, after each turn, each casckpt store's database
           size (apparent and du -sk KiB) and its number of pack files
"""
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.environ.get("HARNESS", "/work/shared/harness"))
import bench  # noqa: E402

TURNS, KEEP = 40, 20


class Opts:
    casckpt_bin = None
    no_settle = False


def main():
    out, seed, args = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    peers = []
    for i, b in enumerate(a for a in args if not a.startswith("--")):
        o = Opts()
        o.casckpt_bin = b
        p = bench.Casckpt(o)
        p.available()
        p.name = f"c{i}"
        peers.append(p)
    if "--git" in args:
        p = bench.GitShadow(Opts())
        p.name = "git"
        peers.append(p)
    projs = {}
    for p in peers:
        root = out / p.name
        bench.rmtree(root)
        p.setup(root)
        proj = root / "proj"
        proj.mkdir(parents=True)
        for d in ("net", "crypto"):
            bench.copytree(Path(bench.GOROOT, "src", d), proj / d)
        projs[p.name] = proj
    files = [f for f in bench.captured_files(projs[peers[0].name]) if f.endswith(".go")]
    res = {p.name: {"lat": [], "cpu": [], "db": []} for p in peers}
    for p in peers:
        os.sync()
        s = p.snapshot(projs[p.name], "turn 0")
        res[p.name]["first"] = (s["wall_s"], s["cpu_s"], p.store_size()["kib"])
    states = {p.name: {"files": list(files)} for p in peers}
    for turn in range(1, TURNS + 1):
        for p in peers[turn % len(peers):] + peers[:turn % len(peers)]:
            bench.agent_turn(projs[p.name], turn, seed, states[p.name])
            os.sync()
            s = p.snapshot(projs[p.name], f"turn {turn}", keep=KEEP)
            r = res[p.name]
            r["lat"].append(s["time_s"])
            r["cpu"].append(s["cpu_s"])
            if turn in (TURNS // 2, TURNS):
                r[f"kib{turn}"] = p.store_size()["kib"]
            if "--trace" in args and p.name != "git":
                db = p.store_path() / "casckpt.db"
                r["db"].append((db.stat().st_size >> 10, bench.du(db)[1],
                                len(list((p.store_path() / "packs").iterdir()))))
    for p in peers:
        r = res[p.name]
        print(f"{p.name}: first {r['first'][0]:.2f} s wall, {r['first'][1]:.2f} s CPU, {r['first'][2]} KiB; "
              f"turn median {statistics.median(r['lat']) * 1000:.1f} ms, CPU median "
              f"{statistics.median(r['cpu']) * 1000:.1f} ms, mean {statistics.mean(r['cpu']) * 1000:.1f} ms; "
              f"store after {TURNS // 2} turns {r[f'kib{TURNS // 2}']} KiB, after {TURNS} {r[f'kib{TURNS}']} KiB")
        if r["db"]:
            print(f"  database after each turn (KiB, du KiB, pack files): {r['db']}")
    print("load average", os.getloadavg())
    (out / "res.json").write_text(json.dumps(res))


if __name__ == "__main__":
    main()
