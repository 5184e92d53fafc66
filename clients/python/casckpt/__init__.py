"""casckpt: a drop-in for Hermes' checkpoint manager over the casckpt command.

Switch a Hermes host over with one import::

    from casckpt import CheckpointManager, format_checkpoint_list

Calls run the ``casckpt`` binary (``binary=``, ``$CASCKPT_BIN``, the one a
platform wheel carries, or PATH) with ``--json``: a CheckpointManager through
one resident ``casckpt serve``, the module functions as a process each; nothing here raises
where Hermes' manager never raises.

Beyond Hermes: ``project_policy`` (a project's lifecycle and retention, which
``prune_checkpoints`` applies with ``completed_days``/``failed_days``) and
``read_checkpoint_file`` (``cat``, with ``fallback`` to the newest intact copy).
"""

from casckpt.manager import (
    CHECKPOINT_BASE,
    CheckpointManager,
    clear_all,
    format_checkpoint_list,
    maybe_auto_prune_checkpoints,
    prune_checkpoints,
    store_status,
)
from casckpt.workflow import project_policy, read_checkpoint_file

__all__ = [
    "CHECKPOINT_BASE",
    "CheckpointManager",
    "clear_all",
    "format_checkpoint_list",
    "maybe_auto_prune_checkpoints",
    "project_policy",
    "prune_checkpoints",
    "read_checkpoint_file",
    "store_status",
]
