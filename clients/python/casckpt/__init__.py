"""casckpt: a drop-in for Hermes' checkpoint manager over the casckpt command.

Switch a Hermes host over with one import::

    from casckpt import CheckpointManager, format_checkpoint_list

Calls run the ``casckpt`` binary (``binary=``, ``$CASCKPT_BIN``, the one a
platform wheel carries, or PATH) with ``--json``: a CheckpointManager through
one resident ``casckpt serve``, the module functions as a process each; nothing here raises
where Hermes' manager never raises.
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

__all__ = [
    "CHECKPOINT_BASE",
    "CheckpointManager",
    "clear_all",
    "format_checkpoint_list",
    "maybe_auto_prune_checkpoints",
    "prune_checkpoints",
    "store_status",
]
