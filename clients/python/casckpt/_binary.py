"""The casckpt binary a platform wheel carries, and the console command that runs it."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

_NAME = "casckpt.exe" if os.name == "nt" else "casckpt"


def bundled() -> Optional[str]:
    """The path of the binary inside this package (platform wheels), or None without one."""
    path = Path(__file__).resolve().parent / "_bin" / _NAME
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def main() -> None:
    """The ``casckpt`` console command: runs the bundled binary with this process's arguments."""
    binary = bundled()
    if binary is None:
        sys.exit("casckpt: this installation carries no casckpt binary (a pure-Python wheel): "
                 "install a platform wheel, or put casckpt on PATH")
    args = [binary] + sys.argv[1:]
    if os.name == "nt":  # no exec on Windows: run it and pass its status on
        sys.exit(subprocess.call(args))
    os.execv(binary, args)
