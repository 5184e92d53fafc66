"""One resident ``casckpt serve`` process: requests as JSON lines on its stdin, answers on its stdout.

A host that keeps one client object saves the process start of every call (about 26 ms).
``Resident.call`` returns None whenever the resident process cannot answer (the binary has no
``serve``: it answers the unknown command with exit 2 and no answer line; the process died; a
path that is not UTF-8, which JSON cannot carry as bytes): the caller then runs the command as a
process of its own.  A binary without ``serve`` is not asked again by the same object; a process
that died is started again on the next call.  The process is closed by ``close()``, when the
object is garbage collected, and at interpreter exit (``weakref.finalize``).
"""

import json
import logging
import os
import select
import subprocess
import threading
import time
import weakref
from typing import Dict, List, Optional, Tuple

logger = logging.getLogger(__name__)

# Environment variables whose change (after the process started) restarts it: those casckpt
# reads.  CASCKPT_NOW travels with each request instead.
_ENV_PREFIXES = ("CASCKPT_", "AWS_", "XDG_", "HOME", "HERMES_HOME", "GOGC", "GOMEMLIMIT")


def _env_key() -> Tuple:
    return tuple(sorted((k, v) for k, v in os.environ.items()
                        if k.startswith(_ENV_PREFIXES) and k != "CASCKPT_NOW"))


class _Proc:
    """The running process and what it was started with."""

    def __init__(self, popen: subprocess.Popen, binary: str, env_key: Tuple):
        self.popen, self.binary, self.env_key, self.pid_of_parent = popen, binary, env_key, os.getpid()
        self.buf = b""
        self.answered = False  # it has answered a request: it has serve

    def stop(self, kill: bool) -> None:
        """Close stdin (serve exits 0 at its end) and wait, killing one that does not exit; with
        ``kill`` (a request it will not answer in time) kill it at once."""
        if self.pid_of_parent != os.getpid():
            return  # a forked child: the process is the parent's
        if kill:
            self.popen.kill()
        try:
            self.popen.stdin.close()
        except OSError:
            pass
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        self.popen.stdout.close()


def _stop(holder: List[Optional[_Proc]], kill: bool = False) -> None:
    if holder[0] is not None:
        holder[0].stop(kill)
        holder[0] = None


class Resident:
    """A lazily started ``casckpt serve`` (with ``--store base`` when given), one request at a time."""

    def __init__(self, base: Optional[str]):
        self.base = base
        self.unavailable = os.name == "nt"  # no select() on pipes there: a process per call
        self._holder: List[Optional[_Proc]] = [None]
        self._lock = threading.Lock()
        self._next_id = 0
        self._finalizer = weakref.finalize(self, _stop, self._holder)

    def close(self) -> None:
        """Stop the process, if one runs; a later call starts another."""
        with self._lock:
            _stop(self._holder)

    def call(self, binary: str, args: List[str], timeout: float) -> Optional[Tuple[int, object, str]]:
        """``(exit, result, error)`` of ``casckpt --json args`` run by the resident process, or None
        when it cannot run it (then run it as a process).  Raises subprocess.TimeoutExpired (after
        stopping the process) when no answer comes within ``timeout`` seconds."""
        if self.unavailable or not all(_utf8(a) for a in args):
            return None
        with self._lock:
            proc = self._process(binary)
            if proc is None:
                return None
            self._next_id += 1
            req: Dict = {"id": self._next_id, "args": list(args), "now": os.environ.get("CASCKPT_NOW", "")}
            try:
                req["cwd"] = os.getcwd()
            except OSError:
                pass
            try:
                proc.popen.stdin.write(json.dumps(req).encode() + b"\n")
                proc.popen.stdin.flush()
                line = self._read_line(proc, timeout)
            except subprocess.TimeoutExpired:
                _stop(self._holder, kill=True)
                raise
            except OSError:
                line = None
            if line is None:
                return self._died(proc)
            proc.answered = True
            try:
                ans = json.loads(line.decode("utf-8", errors="replace"))
            except ValueError:
                _stop(self._holder, kill=True)
                return None
            if ans.get("id") != self._next_id:
                _stop(self._holder, kill=True)  # out of step: never trust it again
                return None
            return int(ans.get("exit", 1)), ans.get("result"), ans.get("error") or ""

    def _process(self, binary: str) -> Optional[_Proc]:
        proc = self._holder[0]
        if proc is not None and (proc.pid_of_parent != os.getpid() or proc.binary != binary
                                 or proc.env_key != _env_key() or proc.popen.poll() is not None):
            if proc.pid_of_parent != os.getpid():
                self._holder[0] = None  # forked: leave the parent's process alone
            else:
                _stop(self._holder)
            proc = None
        if proc is None:
            cmd = [binary] + (["--store", self.base] if self.base else []) + ["serve"]
            try:
                popen = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
            except OSError as exc:
                logger.debug("casckpt serve could not start: %s", exc)
                return None
            proc = self._holder[0] = _Proc(popen, binary, _env_key())
        return proc

    def _died(self, proc: _Proc) -> None:
        """The process ended without answering: a binary without serve (exit 2 before any
        answer) is not asked again; another death is logged and the next call starts anew."""
        code = proc.popen.wait()
        _stop(self._holder)
        if not proc.answered and code == 2:
            logger.debug("casckpt has no serve command: a process per call")
            self.unavailable = True
        else:
            logger.warning("casckpt serve ended (exit %s); running the call as a process", code)
        return None

    @staticmethod
    def _read_line(proc: _Proc, timeout: float) -> Optional[bytes]:
        """The next answer line, None at the end of stdout; TimeoutExpired after ``timeout`` s."""
        fd = proc.popen.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in proc.buf:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise subprocess.TimeoutExpired(["casckpt", "serve"], timeout)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            proc.buf += chunk
        line, _, proc.buf = proc.buf.partition(b"\n")
        return line


def _utf8(arg: str) -> bool:
    """Whether ``arg`` survives JSON as its bytes (a path that is not UTF-8 does not)."""
    try:
        arg.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
