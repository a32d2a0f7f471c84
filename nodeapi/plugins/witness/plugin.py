"""The ``witness`` plugin's options and build (bitshares-core
libraries/plugins/witness/witness.cpp ``plugin_set_program_options`` and
``plugin_initialize``): ``witness-id``, ``private-key`` (both repeatable)
and ``enable-stale-production``.  The service (attached as ``witness``)
and the part the API reads (``node.plugins["witness"]``) are one
:class:`~nodeapi.plugins.witness.service.WitnessService`.

Development defaults (:func:`check`): with neither ``witness-id`` nor
``private-key``, the node produces for the 11 init witnesses
:data:`INIT_WITNESSES` of the bundled genesis with the published key
:data:`DEV_WIF`, and ``enable-stale-production`` is on; as in bitshares,
``witness-id`` without ``private-key`` uses that key.  Never use these
defaults on a public chain.
"""

from typing import Mapping, MutableMapping

from nodeapi.chain import authority as auth
from nodeapi.plugins.interface import FLAG, MULTI, Option, Plugin, PluginContext, PluginParts
from nodeapi.plugins.values import parse_bool, parse_private_key, parse_witness_ids
from nodeapi.protocol.ids import instance_number
from nodeapi.protocol.keys import public_key_bytes
from nodeapi.plugins.witness.service import WitnessService

#: The published development key of the bundled genesis (bitshares' "nathan").
DEV_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"
#: The init witnesses of the bundled genesis.
INIT_WITNESSES = tuple(f"1.6.{i}" for i in range(1, 12))

#: The plugin's option rows, in ``--help`` order.
OPTIONS = (
    Option("enable-stale-production", parse_bool,
           "Produce blocks even if the chain head is far behind the clock (default: on "
           "only with the development witness defaults).", kind=FLAG),
    Option("witness-id", parse_witness_ids,
           'Witness id to produce for, e.g. 1.6.1 or "1.6.1" (repeatable; default: the 11 '
           "init witnesses, a development default).", kind=MULTI),
    Option("private-key", parse_private_key,
           'WIF key or ["PUBLIC_KEY","WIF"] pair (repeatable; default: the development '
           "key).", kind=MULTI),
)


def witness_keys(values: Mapping, genesis, chain=None) -> dict:
    """``{witness_id: WIF}`` for :class:`~nodeapi.plugins.witness.service.WitnessService`
    from the parsed option ``values`` ({} without the witness plugin).
    Each id gets the configured key whose public key is its signing key -
    in ``chain.state`` when given, else in ``genesis``'
    ``initial_witness_candidates`` (1.6.N is candidate N-1) - or the first
    configured key when none matches (the service then reports
    ``no_private_key`` at its slots)."""
    if "witness" not in values["plugins"]:
        return {}
    by_public = {}
    for wif in values["private-key"]:
        by_public.setdefault(auth.public_key_data(wif), wif)
    candidates = genesis.data.get("initial_witness_candidates", [])
    out = {}
    for wid in values["witness-id"]:
        signing, instance = None, instance_number(wid)
        if chain is not None and wid in chain.state.objects:
            signing = chain.state.objects[wid]["signing_key"]
        elif chain is None and 1 <= instance <= len(candidates):
            signing = candidates[instance - 1]["block_signing_key"]
        key = by_public.get(public_key_bytes(signing)) if signing else None
        out[wid] = key or values["private-key"][0]
    return out


def check(values: MutableMapping, warnings: list) -> None:
    """The development defaults (module text): ``witness-id``,
    ``private-key`` and ``enable-stale-production`` completed in
    ``values``; a warning when the witness plugin signs with
    :data:`DEV_WIF` (not in gateway mode, ``--upstream``, nor with
    ``--devnet``: neither runs the witness plugin)."""
    development = not values["witness-id"] and not values["private-key"]
    if development:
        values["witness-id"] = list(INIT_WITNESSES)
    if not values["private-key"]:
        values["private-key"] = [DEV_WIF]
    if values["enable-stale-production"] is None:
        values["enable-stale-production"] = development
    signs = ("witness" in values["plugins"] and not values["upstream"]
             and not values["devnet"])  # a gateway and a devnet run no witness plugin
    if signs and values["witness-id"] and DEV_WIF in values["private-key"]:
        warnings.append(
            "witness: signing with the published development key (nathan, "
            f"{DEV_WIF[:8]}...): anyone can sign blocks with it; never use it on a "
            "public chain")


def build(context: PluginContext) -> PluginParts:
    """A :class:`WitnessService` producing for the configured witnesses."""
    svc = WitnessService(context.chain, witness_keys(context.values, context.genesis,
                                                     context.chain),
                         clock=context.reactor,
                         enable_stale_production=context.values["enable-stale-production"])
    return PluginParts(api=svc, service=svc)


PLUGIN = Plugin("witness", OPTIONS, build, check=check, default=True)
