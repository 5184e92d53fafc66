"""BenchmarkClientW3's driver for the Python client (see bench/clients_test.go).

    python3 client_w3.py resident|process STORE

One CheckpointManager (resident: through one casckpt serve; process: a process per call) on
STORE.  Each line on stdin, {"dir", "reason", "keep"}, is one W3 turn: a new turn and its
checkpoint, as a Hermes host takes it.  Each is answered with one line, {"ok", "error",
"cpu_s"}: cpu_s is the CPU seconds this process, the casckpt processes it waited for and the
resident server have used so far.
"""

import json
import os
import sys

from casckpt import CheckpointManager


def server_cpu(m: CheckpointManager) -> float:
    """The resident server's CPU seconds (Linux /proc), 0 without one."""
    resident = m._runner.resident
    proc = resident._holder[0] if resident is not None else None
    if proc is None:
        return 0.0
    try:
        with open(f"/proc/{proc.popen.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    mode, store = sys.argv[1], sys.argv[2]
    managers = {}
    for line in sys.stdin:
        turn = json.loads(line)
        m = managers.get(turn["keep"])
        if m is None:
            m = managers[turn["keep"]] = CheckpointManager(
                enabled=True, max_snapshots=turn["keep"], checkpoint_base=store, resident=mode == "resident")
        m.new_turn()
        created = m.ensure_checkpoint(turn["dir"], turn["reason"])
        t = os.times()
        cpu = t.user + t.system + t.children_user + t.children_system + sum(server_cpu(x) for x in managers.values())
        err = "" if created else f"no snapshot taken: {m.last_snapshot}"
        print(json.dumps({"ok": created, "error": err, "cpu_s": cpu}), flush=True)
    for m in managers.values():
        m.close()


if __name__ == "__main__":
    main()
