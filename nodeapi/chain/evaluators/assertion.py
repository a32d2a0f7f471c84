"""The assert evaluator (36): checks its predicates against the state and
changes nothing else.

Graphene reference: libraries/chain/assert_evaluator.cpp
(``predicate_evaluator``, ``assert_evaluator::do_evaluate``).  Predicates
(wire ``[which, {...}]``, the ``predicate`` static_variant of assert.hpp):

- 0 ``account_name_eq_lit_predicate`` ``{account_id, name}``: the account's
  name is ``name``;
- 1 ``asset_symbol_eq_lit_predicate`` ``{asset_id, symbol}``: the asset's
  symbol is ``symbol``;
- 2 ``block_id_predicate`` ``{id}``: ``id`` is the block id the block
  summary holds for the block number in ``id`` (its slot ``num & 0xffff``:
  one of the last 65536 blocks).

A predicate's ``which`` must be below the global parameter
``max_predicate_opcode`` (1 on the bundled genesis: only the account name
predicate is allowed).  Every failure is an
:class:`~nodeapi.chain.errors.InvalidOperation` with graphene's
``FC_ASSERT`` text.  The fee (``fee`` per predicate) is the fee schedule's.
"""

from nodeapi.chain.errors import fc_assert
from nodeapi.chain.evaluators.context import VOID, ApplyContext


def _account_name(ctx: ApplyContext, p: dict) -> None:
    fc_assert(ctx.state.require(p["account_id"])["name"] == p["name"],
              "p.account_id(db).name == p.name")


def _asset_symbol(ctx: ApplyContext, p: dict) -> None:
    fc_assert(ctx.state.require(p["asset_id"])["symbol"] == p["symbol"],
              "p.asset_id(db).symbol == p.symbol")


def _block_id(ctx: ApplyContext, p: dict) -> None:
    """The block summary of slot ``num_from_id(id) & 0xffff``
    (``ctx.block_summary``: slot -> block id of the last 65536 blocks; a
    slot never filled holds the zero id, as graphene's 65536 summaries
    created at genesis)."""
    num = int(p["id"][:8], 16)
    summary = ctx.block_summary.get(num & 0xFFFF, "0" * 40)
    fc_assert(summary == p["id"],
              "block_summary_id_type( block_header::num_from_id( p.id ) & 0xffff )(db)"
              ".block_id == p.id")


_PREDICATES = (_account_name, _asset_symbol, _block_id)


def assert_operation(ctx: ApplyContext, data: dict) -> list:
    """assert (36): every predicate holds (module docstring); result void.
    Raises :class:`~nodeapi.chain.errors.InvalidOperation` (graphene's
    texts), :class:`~nodeapi.chain.errors.UnknownObject` for an unknown
    account or asset."""
    max_opcode = int(ctx.parameters.get("max_predicate_opcode", 0))
    for which, predicate in data["predicates"]:
        which = int(which)
        fc_assert(which < max_opcode, "unsigned(p.which()) < max_predicate_opcode")
        _PREDICATES[which](ctx, predicate)
    return VOID
