"""CheckpointManager (its calls through one resident ``casckpt serve``) and the maintenance functions
(each call one ``casckpt --json`` process)."""

import datetime
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from casckpt._binary import bundled
from casckpt._serve import Resident

logger = logging.getLogger(__name__)

# Store directory used when a caller passes no ``checkpoint_base``; None means
# casckpt's own default ($CASCKPT_HOME, $XDG_DATA_HOME/casckpt, ~/.local/share/casckpt).
CHECKPOINT_BASE: Optional[Path] = None

# Seconds one casckpt process may take before the call gives up (a busy store
# makes casckpt wait for its lock; the host must not wait with it).
DEFAULT_TIMEOUT = 30.0

_COMMIT_HASH_RE = re.compile(r"^(?:[0-9a-fA-F]{4,64}|@[1-9][0-9]*)$")
_PROJECT_MARKERS = (".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod",
                    "Makefile", "pom.xml", ".hg", "Gemfile")
# The reason ``restore --safe`` gives for a path an agent changed that has changed since.
_CHANGED_SINCE_AGENT_WROTE = "changed since the agent's last write"
_MAX_FILE_SIZE_MB = 8796093022207  # casckpt's largest cap: "no cap" for Hermes' 0
# Per command, the JSON keys the client carries into its results, in order, each with its JSON type
# ("string|null"): generated from Go package jsonapi (go generate ./jsonapi; TestFieldsJSONIsGenerated,
# TestPythonClientCarriesEveryField).
_FIELDS = json.loads((Path(__file__).parent / "fields.json").read_text(encoding="utf-8"))


def _carry(doc: Dict, command: str) -> Dict:
    """The declared keys of ``doc`` (absent ones as None)."""
    return {k: doc.get(k) for k in _FIELDS.get(command, [])}


# What every call fails with when there is no casckpt program; logged once, at WARNING.
_NO_BINARY = "casckpt binary not found (set CASCKPT_BIN)"
_warned_no_binary = False


def _no_binary() -> str:
    """``_NO_BINARY``, warned about the first time in this process (a host's every call would repeat it)."""
    global _warned_no_binary
    if not _warned_no_binary:
        _warned_no_binary = True
        logger.warning(_NO_BINARY)
    return _NO_BINARY


def _find_binary(binary: Optional[str]) -> Optional[str]:
    """The casckpt program: ``binary``, else $CASCKPT_BIN, else the one this package carries
    (a platform wheel's), else ``casckpt`` on PATH; None when missing."""
    cand = binary or os.environ.get("CASCKPT_BIN") or bundled() or "casckpt"
    if os.sep in cand:
        return cand if os.path.isfile(cand) and os.access(cand, os.X_OK) else None
    return shutil.which(cand)


class _Runner:
    """Runs one casckpt command with --json against one store: through ``resident`` (a
    ``casckpt serve`` kept for a client object) when given and able, else as a process.

    Callers pass the command, its flags, then ``"--"`` and the positional arguments, so that a
    path or reference starting with ``-`` is never read as a flag."""

    def __init__(self, binary: Optional[str], checkpoint_base, timeout: Optional[float], resident: bool = False):
        self.binary, self.timeout = binary, DEFAULT_TIMEOUT if timeout is None else timeout
        base = checkpoint_base if checkpoint_base is not None else CHECKPOINT_BASE
        self.base = None if base is None else str(Path(base).expanduser())
        self.resident = Resident(self.base) if resident else None

    def run(self, *args: str) -> Tuple[bool, object, str]:
        """``(ok, document, error)``; never raises."""
        binary = _find_binary(self.binary)
        if binary is None:
            return False, None, _no_binary()
        try:
            answer = self.resident.call(binary, list(args), self.timeout) if self.resident else None
            if answer is None:
                return self._process(binary, args)
        except subprocess.TimeoutExpired:
            return False, None, self._timed_out(args)
        code, doc, err = answer
        if code != 0:
            if doc is None:  # as a process prints it
                doc = {"error": err, "exit": code}
            logger.debug("casckpt %s failed: %s", " ".join(args[:1]), err)
            return False, doc, err or f"casckpt exited {code}"
        return True, doc, ""

    def _timed_out(self, args) -> str:
        msg = f"casckpt timed out after {self.timeout:g}s (store busy?): {' '.join(args[:1])}"
        logger.warning(msg)
        return msg

    def _process(self, binary: str, args) -> Tuple[bool, object, str]:
        """``run`` as a process of its own."""
        cmd = [binary] + (["--store", self.base] if self.base else []) + ["--json"] + list(args)
        try:
            res = subprocess.run(cmd, capture_output=True, timeout=self.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, None, self._timed_out(args)
        except OSError as exc:
            logger.warning("casckpt could not run: %s", exc)
            return False, None, f"casckpt could not run: {exc}"
        try:
            doc = json.loads(res.stdout.decode("utf-8", errors="replace") or "null")
        except ValueError:
            doc = None
        if res.returncode != 0:
            err = doc.get("error") if isinstance(doc, dict) else None
            err = err or res.stderr.decode("utf-8", errors="replace").strip().removeprefix("casckpt: ")
            logger.debug("casckpt %s failed: %s", " ".join(args[:1]), err)
            return False, doc, err or f"casckpt exited {res.returncode}"
        return True, doc, ""

    def close(self) -> None:
        if self.resident is not None:
            self.resident.close()


def _validate_commit_hash(commit_hash: str) -> Optional[str]:
    """Error string if ``commit_hash`` is no snapshot reference, else None (as Hermes)."""
    if not commit_hash or not commit_hash.strip():
        return "Empty commit hash"
    if commit_hash.startswith("-"):
        return f"Invalid commit hash (must not start with '-'): {commit_hash!r}"
    if not _COMMIT_HASH_RE.match(commit_hash):
        return f"Invalid commit hash (expected 4-64 hex characters): {commit_hash!r}"
    return None


def _validate_file_path(file_path: str, working_dir: str) -> Optional[str]:
    """Error string if ``file_path`` is absolute or escapes ``working_dir``, else None (as Hermes)."""
    if not file_path or not file_path.strip():
        return "Empty file path"
    if os.path.isabs(file_path):
        return f"File path must be relative, got absolute path: {file_path!r}"
    abs_dir = _normalize_path(working_dir)
    if not (abs_dir / file_path).resolve().is_relative_to(abs_dir):
        return f"File path escapes the working directory via traversal: {file_path!r}"
    return None


def _normalize_path(path_value: str) -> Path:
    return Path(path_value).expanduser().resolve()


def _project_hash(workdir: str) -> str:
    """Hermes' project identity: sha256 of the absolute path, 16 hex digits."""
    return hashlib.sha256(str(_normalize_path(workdir)).encode()).hexdigest()[:16]


def _epoch(rfc3339: Optional[str]) -> Optional[float]:
    try:
        return datetime.datetime.fromisoformat(str(rfc3339).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _failure(err: str) -> Dict:
    """Hermes' failure dict."""
    return {"success": False, "error": err}


def _not_found(commit_hash: str, err: str) -> Dict:
    """The failure dict for ``err``; casckpt's "not found" reads as Hermes' unknown-checkpoint message."""
    if err != _NO_BINARY and ("not found" in err or "unknown" in err or "no snapshot" in err):
        return {"success": False, "error": f"Checkpoint '{commit_hash}' not found", "debug": err}
    return _failure(err)


class CheckpointManager:
    """Automatic filesystem checkpoints in a casckpt store, Hermes' interface.

    ``new_turn()`` at the start of each agent turn, ``ensure_checkpoint(dir, reason)`` before any
    file-mutating tool call (at most one snapshot per directory per turn), ``record_agent_write``
    after each write.  Snapshots carry this manager's session ID and the current turn ID.
    """

    def __init__(self, enabled: bool = False, max_snapshots: int = 20, max_total_size_mb: int = 500,
                 max_file_size_mb: int = 10, checkpoint_base=None, binary: Optional[str] = None,
                 timeout: Optional[float] = None, session_id: Optional[str] = None, resident: bool = True):
        self.enabled = enabled
        self.max_snapshots, self.max_total_size_mb, self.max_file_size_mb = (
            max(1, int(max_snapshots)), max(0, int(max_total_size_mb)), max(0, int(max_file_size_mb)))
        self._runner = _Runner(binary, checkpoint_base, timeout, resident)
        self.session_id = session_id or uuid.uuid4().hex
        self.turn_id = uuid.uuid4().hex
        self._checkpointed_dirs = set()
        self.last_snapshot: Dict = {}  # the last snapshot's casckpt document (fields.json "snapshot")
        self.last_write: Dict = {}  # the last record-write's casckpt document

    def close(self) -> None:
        """Stop this manager's resident ``casckpt serve`` (garbage collection and interpreter exit
        stop it too); a later call starts another.  Never raises."""
        try:
            self._runner.close()
        except Exception as exc:
            logger.debug("Closing casckpt serve failed: %s", exc)

    def __enter__(self) -> "CheckpointManager":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def new_turn(self) -> None:
        """Start a new turn (a fresh turn ID) and reset the per-turn dedup."""
        self._checkpointed_dirs.clear()
        self.turn_id = uuid.uuid4().hex

    def end_turn(self) -> None:
        """End the current turn in every directory checkpointed during it (casckpt ``--end-turn``),
        so that what changed since counts as someone else's in safe restores and ``casckpt undo``.
        Not in Hermes; a host that never calls it relies on ``record_agent_write``.  Never raises."""
        if not self.enabled:
            return
        for abs_dir in sorted(self._checkpointed_dirs):
            try:
                ok, _, err = self._runner.run(*self._snapshot_args(abs_dir, "end of turn", "--end-turn"))
                if not ok:
                    logger.debug("Ending the turn in %s failed: %s", abs_dir, err)
            except Exception as exc:
                logger.debug("Ending the turn in %s failed: %s", abs_dir, exc)

    def ensure_checkpoint(self, working_dir: str, reason: str = "auto") -> bool:
        """Snapshot ``working_dir`` once per turn; True when a snapshot was stored.  Never raises."""
        if not self.enabled:
            return False
        try:
            abs_dir = str(_normalize_path(working_dir))
            if abs_dir in {"/", str(Path.home())}:
                logger.debug("Checkpoint skipped: directory too broad (%s)", abs_dir)
                return False
            if abs_dir in self._checkpointed_dirs:
                return False
            self._checkpointed_dirs.add(abs_dir)
            return self._take(abs_dir, reason)
        except Exception as exc:  # never raise into the agent loop
            logger.debug("Checkpoint failed (non-fatal): %s", exc)
            return False

    def _take(self, abs_dir: str, reason: str) -> bool:
        ok, doc, err = self._runner.run(*self._snapshot_args(abs_dir, reason))
        if not ok:
            logger.debug("Checkpoint of %s failed: %s", abs_dir, err)
            return False
        self.last_snapshot = _carry(doc if isinstance(doc, dict) else {}, "snapshot")
        return bool(isinstance(doc, dict) and doc.get("created"))

    def _snapshot_args(self, abs_dir: str, reason: str, *flags: str) -> List[str]:
        """The snapshot command for ``abs_dir`` with this manager's caps, session, turn and ``flags``."""
        return ["snapshot", "-m", reason, "--keep", str(self.max_snapshots),
                "--max-size-mb", str(self.max_total_size_mb),
                "--max-file-size-mb", str(self.max_file_size_mb or _MAX_FILE_SIZE_MB),
                "--session", self.session_id, "--turn", self.turn_id, *flags, "--", abs_dir]

    def record_agent_write(self, file_path: str) -> None:
        """Record that the agent just wrote ``file_path`` (for safe restore); a missing file records
        the agent's deletion of it, a directory nothing.  Never raises."""
        if not self.enabled:
            return
        try:
            path = _normalize_path(file_path)
            if path.is_dir():
                return
            workdir = self.get_working_dir_for_path(str(path))
            ok, doc, err = self._runner.run("record-write", "--", workdir, str(path))
            self.last_write = _carry(doc, "record-write") if ok and isinstance(doc, dict) else {}
            if not ok:
                logger.debug("record_agent_write failed for %s: %s", file_path, err)
        except Exception as exc:
            logger.debug("record_agent_write failed for %s: %s", file_path, exc)

    def list_checkpoints(self, working_dir: str) -> List[Dict]:
        """The directory's checkpoints, most recent first (at most ``max_snapshots``)."""
        try:
            ok, doc, _ = self._runner.run("list", "-n", str(self.max_snapshots), "--", str(_normalize_path(working_dir)))
        except Exception as exc:
            logger.debug("list_checkpoints failed: %s", exc)
            return []
        if not ok or not isinstance(doc, list):
            return []
        return [{"hash": e.get("id"), "short_hash": e.get("short_id"), "timestamp": e.get("time"),
                 "reason": e.get("reason") or "", "files_changed": e.get("files_changed", 0),
                 "insertions": e.get("insertions", 0), "deletions": e.get("deletions", 0),
                 **_carry(e, "list[]")} for e in doc]

    def list_all_checkpoints(self) -> List[Dict]:
        """Checkpoints of every project in the store, most recent first, each with ``workdir``."""
        ok, doc, _ = self._runner.run("status")
        if not ok or not isinstance(doc, dict):
            return []
        results: List[Dict] = []
        for project in doc.get("projects") or []:
            workdir = project.get("workdir") or ""
            for entry in self.list_checkpoints(workdir) if workdir else []:
                entry["workdir"] = workdir
                results.append(entry)
        results.sort(key=lambda x: x.get("timestamp") or "", reverse=True)
        return results

    def diff(self, working_dir: str, commit_hash: str, semantic: bool = False) -> Dict:
        """Diff from a checkpoint to the working tree: ``{"success", "stat", "diff"}``; ``semantic``: the
        ``diff`` text shows a JSON file's changed values by JSONPath (``diff --semantic``) instead of its
        lines (``files[].json_changes`` has them either way)."""
        err = _validate_commit_hash(commit_hash)
        if err:
            return _failure(err)
        try:
            abs_dir = str(_normalize_path(working_dir))
            ok, doc, err = self._runner.run("diff", "--", abs_dir, commit_hash)
            if not ok:
                return _not_found(commit_hash, err)
            stat = self._text("diff", "--stat", "--", abs_dir, commit_hash)
            text = self._text("diff", *(["--semantic"] if semantic else []), "--", abs_dir, commit_hash)
        except Exception as exc:
            return _failure(f"Could not generate diff: {exc}")
        if stat is None and text is None:
            return _failure("Could not generate diff")
        return {"success": True, "stat": stat or "", "diff": text or "", **_carry(doc, "diff")}

    def _text(self, *args: str) -> Optional[str]:
        """A command's human output (for Hermes' ``stat``/``diff`` strings), None on failure."""
        binary = _find_binary(self._runner.binary)
        if binary is None:
            return None
        base = ["--store", self._runner.base] if self._runner.base else []
        try:
            res = subprocess.run([binary] + base + list(args), capture_output=True,
                                 timeout=self._runner.timeout, stdin=subprocess.DEVNULL)
        except (subprocess.TimeoutExpired, OSError):
            return None
        return res.stdout.decode("utf-8", errors="replace").strip() if res.returncode == 0 else None

    def session_diff(self, working_dir: str) -> Dict:
        """Earliest retained checkpoint vs the working tree; ``"empty": True`` when nothing to show."""
        checkpoints = self.list_checkpoints(working_dir)
        if not checkpoints:
            return {"success": True, "stat": "", "diff": "", "empty": True}
        baseline = checkpoints[-1].get("hash") or ""
        result = self.diff(working_dir, baseline)
        if result.get("success"):
            result.setdefault("baseline", baseline)
            if not (result.get("stat") or result.get("diff")):
                result["empty"] = True
        return result

    def restore(self, working_dir: str, commit_hash: str, file_path: str = None, safe: bool = False,
                fallback: bool = False) -> Dict:
        """Restore the directory (or one file) to a checkpoint; ``safe`` keeps what no agent changed;
        ``fallback``: when the checkpoint's data is damaged, the newest older intact one (``tried``
        names those passed over; ``restored_to`` the one used)."""
        err = _validate_commit_hash(commit_hash)
        if err:
            return _failure(err)
        try:
            abs_dir = str(_normalize_path(working_dir))
            if file_path:
                err = _validate_file_path(file_path, abs_dir)
                if err:
                    return _failure(err)
            safe = bool(safe and not file_path)  # as Hermes: safe applies to whole restores
            if safe:
                self._record_deleted_since_written(abs_dir, commit_hash)
            flags = (["--safe"] if safe else []) + (["--fallback"] if fallback else [])
            ok, doc, err = self._runner.run("restore", *flags, "--", abs_dir, commit_hash,
                                            *([file_path] if file_path else []))
            if not ok or not isinstance(doc, dict):
                return _not_found(commit_hash, err or "unexpected output from casckpt restore")
            return self._restore_result(abs_dir, commit_hash, file_path, safe, doc)
        except Exception as exc:
            logger.debug("restore failed: %s", exc)
            return _failure(f"Restore failed: {exc}")

    def _record_deleted_since_written(self, abs_dir: str, commit_hash: str) -> None:
        """Record as the agent's each file that is gone since an agent last wrote it.

        Hermes' safe restore brings such a file back (its last content was the agent's, and restoring
        a missing file overwrites nothing); casckpt's restores what is as the agent left it, so the
        deletion is recorded first (casckpt ``record-write`` of a missing path)."""
        ok, doc, _ = self._runner.run("restore", "--safe", "--dry-run", "--", abs_dir, commit_hash)
        if not ok or not isinstance(doc, dict):
            return
        gone = [k.get("path") or "" for k in doc.get("kept") or []
                if k.get("reason") == _CHANGED_SINCE_AGENT_WROTE]
        gone = [p for p in gone if p and not os.path.lexists(os.path.join(abs_dir, p))]
        if gone:
            self._runner.run("record-write", "--", abs_dir, *gone)

    def _restore_result(self, abs_dir: str, commit_hash: str, file_path, safe: bool, doc: Dict) -> Dict:
        full = doc.get("restored_to") or commit_hash
        reason = next((c["reason"] for c in self.list_checkpoints(abs_dir) if c.get("hash") == full), "") or "unknown"
        result = {**_carry(doc, "restore"), "success": True, "restored_to": full[:8], "reason": reason,
                  "directory": abs_dir}
        if file_path:
            result["file"] = file_path
        if safe and doc.get("safe"):
            result["restored_files"] = [c.get("path") for c in doc.get("changes") or []]
            result["skipped_user_edits"] = [k.get("path") for k in doc.get("kept") or []]
            result["skipped_oversize"] = list(doc.get("skipped") or [])
            if not result["restored_files"] and result["skipped_user_edits"]:
                result["reason"] = "nothing to restore (all changed files were user-edited)"
        return result

    def get_working_dir_for_path(self, file_path: str) -> str:
        """The project directory of ``file_path``: ``casckpt root``, else the nearest marker ancestor."""
        path = _normalize_path(file_path)
        ok, doc, _ = self._runner.run("root", "--", str(path))
        if ok and isinstance(doc, dict) and doc.get("root"):
            return str(doc["root"])
        candidate = path if path.is_dir() else path.parent
        home, check = Path.home(), candidate
        while check != check.parent and check != home:
            if any((check / m).exists() for m in _PROJECT_MARKERS):
                return str(check)
            check = check.parent
        return str(candidate)


def _empty_prune_result() -> Dict[str, int]:
    return dict.fromkeys(("scanned", "deleted_orphan", "deleted_stale", "deleted_completed", "deleted_failed",
                          "deleted_test", "errors", "bytes_freed"), 0)


def _orphans_allowed(runner: _Runner, allowlist: Optional[set]) -> bool:
    """Whether every current orphan is in ``allowlist`` (Hermes hashes or workdirs); True without one."""
    if allowlist is None:
        return True
    ok, doc, _ = runner.run("status")
    if not ok or not isinstance(doc, dict):
        return False
    for p in doc.get("projects") or []:
        wd = p.get("workdir") or ""
        if p.get("state") == "orphan" and _project_hash(wd) not in allowlist and wd not in allowlist:
            return False
    return True


def _lifecycle_flags(completed_days: int, failed_days: int) -> List[str]:
    """prune's lifecycle rules: completed and failed projects go after these days (0: never)."""
    return ["--completed-days", str(max(0, int(completed_days))), "--failed-days", str(max(0, int(failed_days)))]


def prune_checkpoints(retention_days: int = 7, delete_orphans: bool = True, checkpoint_base=None,
                      max_total_size_mb: int = 0, orphan_allowlist: Optional[set] = None,
                      binary: Optional[str] = None, completed_days: int = 7,
                      failed_days: int = 30) -> Dict[str, int]:
    """Delete orphan and stale projects and reclaim space.  Never raises.

    ``completed_days``/``failed_days``: a project whose policy (``project_policy``) says it completed
    or failed goes that many days after (0: never; its own ``retention_days`` first).

    ``orphan_allowlist``: orphans are deleted only when every current orphan is in it (casckpt
    deletes orphans all or none); otherwise they are kept this time."""
    result = _empty_prune_result()
    try:
        runner = _Runner(binary, checkpoint_base, None)
        keep = not delete_orphans or not _orphans_allowed(runner, orphan_allowlist)
        ok, doc, err = runner.run("prune", "--retention-days", str(max(0, int(retention_days))),
                                  "--max-size-mb", str(max(0, int(max_total_size_mb))),
                                  *_lifecycle_flags(completed_days, failed_days),
                                  *(["--keep-orphans"] if keep else []))
    except Exception as exc:
        ok, doc, err = False, None, str(exc)
    if not ok or not isinstance(doc, dict):
        logger.warning("checkpoint prune failed: %s", err)
        result["errors"] = 1
        return result
    result.update(_carry(doc, "prune"))
    return result


def maybe_auto_prune_checkpoints(retention_days: int = 7, min_interval_hours: int = 24,
                                 delete_orphans: bool = True, checkpoint_base=None,
                                 max_total_size_mb: int = 0, binary: Optional[str] = None, completed_days: int = 7,
                                 failed_days: int = 30) -> Dict[str, object]:
    """Prune (as ``prune_checkpoints``) at most once per ``min_interval_hours``: ``{"skipped", "result",
    "error"?}``.  Never raises."""
    out: Dict[str, object] = {"skipped": False}
    try:
        runner = _Runner(binary, checkpoint_base, None)
        ok, doc, err = runner.run("prune", "--auto", "--min-interval-hours", str(max(0, int(min_interval_hours))),
                                  "--retention-days", str(max(0, int(retention_days))),
                                  "--max-size-mb", str(max(0, int(max_total_size_mb))),
                                  *_lifecycle_flags(completed_days, failed_days),
                                  *([] if delete_orphans else ["--keep-orphans"]))
        if not ok or not isinstance(doc, dict):
            out["error"] = err or "unexpected output from casckpt prune"
            logger.warning("checkpoint auto-maintenance failed: %s", out["error"])
            return out
        if doc.get("skipped"):
            out["skipped"] = True
            return out
        result = _empty_prune_result()
        result.update(_carry(doc, "prune"))
        out["result"] = result
    except Exception as exc:
        logger.warning("checkpoint auto-maintenance failed: %s", exc)
        out["error"] = str(exc)
    return out


def store_status(checkpoint_base=None, binary: Optional[str] = None) -> Dict:
    """Summary of the store in Hermes' shape (``base``, sizes, ``projects``, ``legacy_archives``)."""
    runner = _Runner(binary, checkpoint_base, None)
    out: Dict = {"base": runner.base or "", "store_size_bytes": 0, "legacy_size_bytes": 0,
                 "total_size_bytes": 0, "project_count": 0, "projects": [], "pre_v2_projects": [],
                 "legacy_archives": [], "damaged_objects": []}
    try:
        ok, doc, err = runner.run("status")
        if not ok or not isinstance(doc, dict):
            out["error"] = err
            return out
        out["base"] = doc.get("store") or out["base"]
        out["store_size_bytes"] = int(doc.get("size_bytes") or 0)
        out["projects"] = [{**_carry(p, "status.projects[]"), "hash": _project_hash(p.get("workdir") or "/"),
                            "workdir": p.get("workdir") or "", "exists": p.get("state") == "live",
                            "created_at": _epoch(p.get("created_at")), "last_touch": _epoch(p.get("last_touch")),
                            "commits": p.get("snapshots", 0)} for p in doc.get("projects") or []]
        out["legacy_archives"] = [_legacy(entry) for entry in doc.get("legacy") or []]
        out["damaged_objects"] = [_carry(o, "status.damaged_objects[]") for o in doc.get("damaged_objects") or []]
    except Exception as exc:
        out["error"] = str(exc)
    out["project_count"] = len(out["projects"])
    out["legacy_size_bytes"] = sum(a["size_bytes"] or 0 for a in out["legacy_archives"])
    out["total_size_bytes"] = out["store_size_bytes"] + out["legacy_size_bytes"]
    return out


def _legacy(entry: Dict) -> Dict:
    path = entry.get("path") or ""
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        mtime = 0
    return {"name": os.path.basename(path), "mtime": mtime, **_carry(entry, "status.legacy[]")}


def clear_all(checkpoint_base=None, binary: Optional[str] = None) -> Dict[str, int]:
    """Delete the whole store.  Irreversible.  ``{"bytes_freed", "deleted"}``; never raises."""
    out = {"bytes_freed": 0, "deleted": False}
    try:
        runner = _Runner(binary, checkpoint_base, None)
        ok, doc, _ = runner.run("status")
        status = doc if ok and isinstance(doc, dict) else {}
        size = int(status.get("size_bytes") or 0)
        # As Hermes: nothing deleted when there was no store (status says so: no bytes, no directory).
        existed = not status or size > 0 or os.path.isdir(str(status.get("store") or ""))
        ok, doc, err = runner.run("clear", "--yes")
        if not ok:
            logger.warning("Could not clear checkpoint store: %s", err)
            return out
        out["bytes_freed"], out["deleted"] = size, existed
        out.update(_carry(doc if isinstance(doc, dict) else {}, "clear"))
    except Exception as exc:
        logger.warning("Could not clear checkpoint store: %s", exc)
    return out


def format_checkpoint_list(checkpoints: List[Dict], directory: str) -> str:
    """Format a checkpoint list for display to the user (Hermes' layout)."""
    if not checkpoints:
        return f"No checkpoints found for {directory}"
    lines = [f"📸 Checkpoints for {directory}:\n"]
    for i, cp in enumerate(checkpoints, 1):
        ts = cp.get("timestamp") or ""
        if "T" in ts:
            date, clock = ts.split("T", 1)
            ts = f"{date} {clock[:5]}"
        files, ins, dele = (cp.get(k, 0) for k in ("files_changed", "insertions", "deletions"))
        stat = f"  ({files} file{'s' if files != 1 else ''}, +{ins}/-{dele})" if files else ""
        workdir = cp.get("workdir", "")
        tag = f"[{Path(workdir).name or workdir}]  " if workdir and directory == "all directories" else ""
        lines.append(f"  {i}. {cp['short_hash']}  {ts}  {tag}{cp['reason']}{stat}")
    lines.append("\n  /rollback <N>             restore to checkpoint N")
    lines.append("  /rollback diff <N>        preview changes since checkpoint N")
    lines.append("  /rollback <N> <file>      restore a single file from checkpoint N")
    return "\n".join(lines)
