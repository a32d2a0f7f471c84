"""Debug updates: a direct change to one chain object, outside any
transaction (the debug API's ``debug_update_object`` and the key rewrite of
``debug_generate_blocks``).

Graphene reference: bitshares-core libraries/chain/db_debug.cpp
``debug_apply_update``: ``{"id": ..., "_action": ..., fields...}`` where
``update`` (the object must exist; the given fields change, the others
stay), ``write`` (the object must exist and is replaced: here every field
must be given, since this node has no per-type defaults), ``delete`` (the
object must exist; also the default for an update holding only ``id``) and
``create`` (always refused, as graphene).  Without ``_action``, an update
with fields is a ``write``.

The change is made to the committed state under the pending transactions
(:meth:`nodeapi.chain.chain.Chain.debug_update`), so it stays until the node
restarts: it is not in the block log, which the node replays on start.
"""

from nodeapi.chain.errors import ChainError

ACTIONS = ("create", "write", "update", "delete")


class DebugUpdateError(ChainError):
    """A debug update that cannot be applied (bad form, missing object)."""


def _same_type(old, new):
    """``new`` with an integer field given as a numeric string made an int."""
    if isinstance(old, int) and not isinstance(old, bool) and isinstance(new, str):
        try:
            return int(new, 10)
        except ValueError:
            pass
    return new


def apply_debug_update(state, update: dict) -> str:
    """Apply ``update`` to ``state`` (an
    :class:`~nodeapi.chain.state.ObjectStore`); returns the action taken.

    :raises DebugUpdateError: no ``id``, an unknown action, a missing
        object, ``create``, or a ``write`` lacking fields of the object."""
    if not isinstance(update, dict) or not isinstance(update.get("id"), str):
        raise DebugUpdateError("A debug update is an object with an \"id\"")
    oid = update["id"]
    fields = {k: v for k, v in update.items() if k not in ("id", "_action")}
    action = update.get("_action", "write" if fields else "delete")
    if action not in ACTIONS:
        raise DebugUpdateError(f"Unknown debug update action {action!r}: one of {ACTIONS}")
    if action == "create":
        raise DebugUpdateError("Debug update action \"create\" is not supported (as graphene)")
    old = state.find(oid)
    if old is None:
        raise DebugUpdateError(f"Debug update of {oid}: no such object")
    if action == "delete":
        state.remove(oid)
        return action
    if action == "write":
        missing = sorted(k for k in old if k != "id" and k not in fields)
        if missing:
            raise DebugUpdateError(f"Debug update \"write\" of {oid} lacks {', '.join(missing)}")
    obj = state.modify(oid)
    for key, value in fields.items():
        if key in old:
            obj[key] = _same_type(old[key], value)
    state.reindex(obj, old)
    return action
