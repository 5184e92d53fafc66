"""What a workflow host asks of the store beyond Hermes' manager: a project's lifecycle and retention
policy (``casckpt policy``, which ``prune_checkpoints`` applies) and a file as a checkpoint holds it,
with the fallback to the newest intact copy (``casckpt cat``).  Each call is one ``casckpt --json``
process; neither raises."""

from typing import Dict, Optional

from casckpt.manager import _Runner, _carry, _failure, _normalize_path, _validate_commit_hash, _validate_file_path

_LIFECYCLES = ("running", "completed", "failed")


def project_policy(working_dir: str, lifecycle: Optional[str] = None, test: Optional[bool] = None,
                   retention_days: Optional[int] = None, keep: Optional[int] = None,
                   cleanup: Optional[bool] = None, checkpoint_base=None, binary: Optional[str] = None) -> Dict:
    """Set what is given of the project's policy, and give the policy: ``{"success", "project",
    "lifecycle", "test", "retention_days", "keep", "cleanup", "lifecycle_since"}``.

    ``lifecycle``: running, completed or failed; ``test``: dropped by the first prune after it
    finishes (False undoes it); ``retention_days``/``keep``: the project's own (0 clears);
    ``cleanup=False``: no prune rule drops its checkpoints (True undoes it).  With none given the
    policy is only read."""
    if lifecycle is not None and lifecycle not in _LIFECYCLES:
        return _failure(f"lifecycle must be one of {', '.join(_LIFECYCLES)}")
    flags = ["--lifecycle", lifecycle] if lifecycle is not None else []
    if test is not None:
        flags.append("--test" if test else "--no-test")
    if retention_days is not None:
        flags += ["--retention-days", str(max(0, int(retention_days)))]
    if keep is not None:
        flags += ["--keep", str(max(0, int(keep)))]
    if cleanup is not None:
        flags.append("--cleanup" if cleanup else "--no-cleanup")
    try:
        runner = _Runner(binary, checkpoint_base, None)
        ok, doc, err = runner.run("policy", *flags, "--", str(_normalize_path(working_dir)))
    except Exception as exc:
        return _failure(f"policy failed: {exc}")
    if not ok or not isinstance(doc, dict):
        return _failure(err or "unexpected output from casckpt policy")
    return {"success": True, **_carry(doc, "policy")}


def read_checkpoint_file(working_dir: str, commit_hash: str, file_path: str, fallback: bool = False,
                         check: Optional[str] = None, checkpoint_base=None, binary: Optional[str] = None) -> Dict:
    """A file as checkpoint ``commit_hash`` holds it: ``{"success", "path", "id", "tried", "content"}``
    (``content_base64`` in place of ``content`` when it is not UTF-8 text).

    ``fallback``: when that checkpoint's copy is damaged (or, with ``check="json"``, does not parse as
    JSON), the newest older checkpoint's intact copy; ``id`` is the one used, ``tried`` those passed
    over and why.  With none left, ``success`` is False and ``error`` says how many were tried."""
    err = _validate_commit_hash(commit_hash) or _validate_file_path(file_path, working_dir)
    if err:
        return _failure(err)
    flags = (["--fallback"] if fallback else []) + (["--check", check] if check is not None else [])
    try:
        runner = _Runner(binary, checkpoint_base, None)
        ok, doc, err = runner.run("cat", *flags, "--", str(_normalize_path(working_dir)), commit_hash, file_path)
    except Exception as exc:
        return _failure(f"cat failed: {exc}")
    if not ok or not isinstance(doc, dict):
        return _failure(err or "unexpected output from casckpt cat")
    return {"success": True, **_carry(doc, "cat")}
