"""Loading a graphene genesis file and creating the initial objects.

Reference: bitshares-core libraries/chain/db_genesis.cpp ``database::init_genesis``
(the committee account's core balance 2.5.0, holding the whole
``GRAPHENE_MAX_SHARE_SUPPLY`` until the genesis balances take it: then 0,
changed since the last maintenance; special accounts 1.2.0-1.2.5, then the
genesis accounts in file order, the core asset 1.3.0 with dynamic data
2.3.0, global properties 2.0.0 (no active committee members until the first
maintenance), dynamic global properties 2.1.0 (``next_maintenance_time``
the epoch, so block 1 runs a maintenance), chain properties 2.11.0,
committee members 1.5.N, the null witness 1.6.0 and the witness candidates
1.6.1.., the genesis balance objects 1.15.N, the witness schedule 2.12.0 and
the three FBA accumulators 2.16.0-2.16.2 of the stealth operations).
"""

import copy
import hashlib
import json
import os

import attr

from nodeapi.chain.balances import adjust_balance
from nodeapi.chain.state import ObjectStore
from nodeapi.files import GENESIS_LIMIT, read_bounded
from nodeapi.protocol.config import (
    COMMITTEE_ACCOUNT, CORE_ASSET, DEFAULT_NETWORK_PERCENT_OF_FEE, GRAPHENE_100_PERCENT,
    MAX_SHARE_SUPPLY, MAX_TIME, NULL_ACCOUNT, PROXY_TO_SELF_ACCOUNT, SPECIAL_ACCOUNTS,
    TEMP_ACCOUNT)
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.asset import amount_of, asset, core

DEFAULT_GENESIS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "genesis.json")
ALL_SLOTS_FILLED = (1 << 128) - 1
#: db_genesis.cpp gives only the temp account authorities of threshold 0
#: (the relaxed committee account's are 1, as the others').
_ZERO_THRESHOLD = frozenset((TEMP_ACCOUNT,))
#: Types (in space 2) the account statistics objects may be numbered with:
#: 7 is the specification's (docs/wire-contract.rst section 7), the default;
#: 6 is graphene's ``impl_account_statistics_object_type``, the only one
#: python-bitshares ``Notify(accounts=...)`` and bitsharesjs ``ChainStore``
#: recognise in notices (graphene's 2.7 are transaction objects, which this
#: chain does not expose, so nothing else is numbered 2.6 or 2.7).
STATISTICS_TYPES = (7, 6)
DEFAULT_STATISTICS_TYPE = 7
#: the blockchain accounts whose fees all go to their lifetime referrer
#: and whose registrar, referrer and lifetime referrer are the null account
#: (db_genesis.cpp ``init_account_data_as_null``: null-account, proxy-to-self)
_NULL_LIKE = (NULL_ACCOUNT, PROXY_TO_SELF_ACCOUNT)
#: GRAPHENE_FBA_STEALTH_DESIGNATED_ASSET of bitshares-core's mainnet build
#: (config.hpp): the asset of the three FBA accumulators 2.16.N
FBA_STEALTH_DESIGNATED_ASSET = "1.3.743"
#: the FBA accumulators (fba_object.hpp ``fba_accumulator_id_transfer_to_blind``,
#: ``_blind_transfer``, ``_transfer_from_blind``)
FBA_ACCUMULATORS = 3


@attr.s(frozen=True, auto_attribs=True)
class Genesis:
    """A parsed genesis file.

    :ivar data: the parsed JSON.
    :ivar chain_id: hex sha256 of the file's bytes (docs/wire-contract.rst 7).
    :ivar address_prefix: public key prefix, taken from the first genesis
        key (``TEST`` for the bundled file).
    :ivar core_symbol: the core asset symbol (from the initial balances,
        else the prefix).
    """

    data: dict
    chain_id: str
    address_prefix: str
    core_symbol: str

    @property
    def initial_timestamp(self) -> int:
        """The file's ``initial_timestamp``, in seconds since the epoch: the
        time before block 1."""
        return parse_time(self.data["initial_timestamp"])

    @property
    def parameters(self) -> dict:
        """The file's ``initial_parameters`` (graphene ``genesis_state_type``):
        the chain parameters of 2.0.0 at the start, a dict in wire form."""
        return self.data["initial_parameters"]

    @property
    def block_interval(self) -> int:
        """``initial_parameters.block_interval``: seconds between blocks at the
        start."""
        return int(self.parameters["block_interval"])


def _key_prefix(data: dict) -> str:
    """The chain's key prefix: that of the first initial account's owner
    key, else of the first witness candidate's signing key (a public key is
    the prefix and 50 base58 characters).  Raises ValueError for a genesis
    with neither."""
    for field, key_field in (("initial_accounts", "owner_key"),
                             ("initial_witness_candidates", "block_signing_key")):
        for item in data.get(field) or ():
            key = item.get(key_field) if isinstance(item, dict) else None
            if not isinstance(key, str) or len(key) <= 50:
                raise ValueError(f"genesis {field}: {key_field} {key!r} is not a public key")
            return key[: len(key) - 50]
    raise ValueError("genesis: no initial account or witness candidate to take the key "
                     "prefix from")


def load_genesis(path: str = DEFAULT_GENESIS) -> Genesis:
    """Read a genesis file; raises OSError / ValueError for unreadable files
    (:class:`nodeapi.files.FileRefused`, a ValueError, for one that is not
    a regular file or is over :data:`nodeapi.files.GENESIS_LIMIT`, or one
    without a public key to take the prefix from)."""
    raw = read_bounded(path, GENESIS_LIMIT)
    data = json.loads(raw)
    prefix = _key_prefix(data)
    symbol = prefix
    for bal in data.get("initial_balances", []):
        symbol = bal["asset_symbol"]
        break
    return Genesis(data, hashlib.sha256(raw).hexdigest(), prefix, symbol)


def statistics_space(statistics_type: int) -> str:
    """The ``"space.type"`` (``"2.7"`` or ``"2.6"``) of account statistics
    objects numbered with ``statistics_type`` (one of
    :data:`STATISTICS_TYPES`); raises ValueError for another type."""
    if statistics_type not in STATISTICS_TYPES:
        raise ValueError(f"account statistics type {statistics_type!r} is not one of "
                         f"{', '.join(map(str, STATISTICS_TYPES))}")
    return f"2.{statistics_type}"


def _authority(threshold: int, keys=()) -> dict:
    return {
        "weight_threshold": threshold,
        "account_auths": [],
        "key_auths": [[k, 1] for k in keys],
        "address_auths": [],
    }


def new_account(
    state: ObjectStore, name: str, owner: dict, active: dict, memo_key: str, registrar: str,
    referrer: str, when: int, block_num: int, network_percent: int,
    lifetime_referrer_percent: int, lifetime_referrer: str | None = None,
) -> dict:
    """Create an account 1.2.N with its statistics object
    ``<state.statistics_space>.N`` (2.7.N, or graphene's 2.6.N; graphene
    ``account_create_evaluator::do_apply``); returns the account, whose
    ``statistics`` field names the statistics object.  The fee shares
    (``network_fee_percentage``, ``lifetime_referrer_fee_percentage``, in
    hundredths of a percent) are the caller's: account_create takes the
    chain parameters'; ``lifetime_referrer`` defaults to ``referrer``."""
    aid = f"1.2.{state.next_instance.get('1.2', 0)}"
    stats = state.create(state.statistics_space, {
        "owner": aid, "name": name, "most_recent_op": "2.9.0", "total_ops": 0,
        "removed_ops": 0, "total_core_in_orders": 0, "total_core_inactive": 0,
        "total_core_pob": 0, "total_core_pol": 0, "total_pob_value": 0, "total_pol_value": 0,
        "core_in_balance": 0, "has_cashback_vb": False, "is_voting": False,
        "last_vote_time": 0, "vp_all": 0, "vp_active": 0, "vp_committee": 0,
        "vp_witness": 0, "vp_worker": 0, "vote_tally_time": 0,
        "lifetime_fees_paid": 0, "pending_fees": 0, "pending_vested_fees": 0,
    })
    return state.create("1.2", {
        "membership_expiration_date": 0,
        "registrar": registrar,
        "referrer": referrer,
        "lifetime_referrer": referrer if lifetime_referrer is None else lifetime_referrer,
        "network_fee_percentage": network_percent,
        "lifetime_referrer_fee_percentage": lifetime_referrer_percent,
        "referrer_rewards_percentage": 0,
        "name": name,
        "owner": owner,
        "active": active,
        "options": {
            "memo_key": memo_key, "voting_account": PROXY_TO_SELF_ACCOUNT, "num_witness": 0,
            "num_committee": 0, "votes": [], "extensions": [],
        },
        "num_committee_voted": 0,
        "statistics": stats["id"],
        "whitelisting_accounts": [],
        "blacklisting_accounts": [],
        "whitelisted_accounts": [],
        "blacklisted_accounts": [],
        "owner_special_authority": [0, {}],
        "active_special_authority": [0, {}],
        "top_n_control_flags": 0,
        "annotations": [],
        "creation_block_num": block_num,
        "creation_time": when,
    })


def make_lifetime_member(state: ObjectStore, account_id: str) -> dict:
    """graphene ``account_upgrade_evaluator`` for lifetime membership."""
    acc = state.modify(account_id)
    acc["membership_expiration_date"] = MAX_TIME
    acc["registrar"] = acc["referrer"] = acc["lifetime_referrer"] = account_id
    acc["lifetime_referrer_fee_percentage"] = GRAPHENE_100_PERCENT - acc["network_fee_percentage"]
    return acc


def init_genesis(genesis: Genesis,
                 statistics_type: int = DEFAULT_STATISTICS_TYPE) -> ObjectStore:
    """A new :class:`ObjectStore` holding the genesis objects, account
    statistics numbered with ``statistics_type`` (:func:`statistics_space`;
    raises ValueError for a type not in :data:`STATISTICS_TYPES`)."""
    state = ObjectStore(statistics_space(statistics_type))
    g = genesis.data
    t0 = genesis.initial_timestamp
    null_key = genesis.address_prefix + "1111111111111111111111111111111114T1Anm"
    # db_genesis.cpp "Create blockchain accounts": first the committee
    # account's core balance, the whole supply (its statistics' core_in_balance
    # says so until the first maintenance)
    state.create("2.5", {"owner": COMMITTEE_ACCOUNT, "asset_type": CORE_ASSET,
                         "balance": MAX_SHARE_SUPPLY, "maintenance_flag": False})
    for name, aid in SPECIAL_ACCOUNTS:
        threshold = 0 if aid in _ZERO_THRESHOLD else 1
        network = 0 if aid in _NULL_LIKE else DEFAULT_NETWORK_PERCENT_OF_FEE
        acc = new_account(state, name, _authority(threshold), _authority(threshold), null_key,
                          COMMITTEE_ACCOUNT, COMMITTEE_ACCOUNT, t0, 0, network,
                          GRAPHENE_100_PERCENT - network)
        assert acc["id"] == aid
        acc = state.modify(acc["id"])
        acc["registrar"] = acc["referrer"] = acc["lifetime_referrer"] = (
            NULL_ACCOUNT if aid in _NULL_LIKE else acc["id"])
        acc["membership_expiration_date"] = MAX_TIME
    state.modify(state.objects[COMMITTEE_ACCOUNT]["statistics"])["core_in_balance"] = (
        MAX_SHARE_SUPPLY)
    # db_genesis.cpp "Create initial accounts": an account_create with the
    # temp account as registrar and the default referrer (the committee
    # account, whose lifetime referrer it is), then account_upgrade for a
    # lifetime member; both count as registrations of the first interval
    params = g["initial_parameters"]
    registered = 0
    for spec in g["initial_accounts"]:
        acc = new_account(state, spec["name"], _authority(1, [spec["owner_key"]]),
                          _authority(1, [spec["active_key"]]), spec["active_key"],
                          TEMP_ACCOUNT, COMMITTEE_ACCOUNT, t0, 0, int(params["network_percent_of_fee"]),
                          int(params["lifetime_referrer_percent_of_fee"]))
        registered += 1
        if spec.get("is_lifetime_member"):
            make_lifetime_member(state, acc["id"])
    handed_out = sum(amount_of(b) for b in g["initial_balances"]
                     if b["asset_symbol"] == genesis.core_symbol)
    # db_genesis.cpp: without genesis balances the committee account keeps
    # the whole supply
    supply = handed_out or MAX_SHARE_SUPPLY
    state.create("1.3", {
        "symbol": genesis.core_symbol,
        "precision": 5,
        "issuer": NULL_ACCOUNT,
        "options": {
            "max_supply": int(g["max_core_supply"]), "market_fee_percent": 0,
            "max_market_fee": MAX_SHARE_SUPPLY, "issuer_permissions": 0, "flags": 0,
            "core_exchange_rate": {"base": core(1),
                                   "quote": core(1)},
            "whitelist_authorities": [], "blacklist_authorities": [],
            "whitelist_markets": [], "blacklist_markets": [], "description": "",
            "extensions": {},
        },
        "dynamic_asset_data_id": "2.3.0",
        # db_genesis.cpp: genesis assets are of block 0 at the initial timestamp
        "creation_block_num": 0,
        "creation_time": t0,
    })
    state.create("2.3", {"current_supply": supply, "confidential_supply": 0,
                         "accumulated_fees": 0, "accumulated_collateral_fees": 0,
                         "fee_pool": 0})
    # graphene db_genesis.cpp: witness 1.6.0 is created and removed (the
    # null witness id stays reserved), then the witness candidates (vote
    # ids 1:0, 1:1, ...), then the committee candidates (0:n, ...): vote id
    # instances are one sequence (next_available_vote_id) over all types
    state.new_id("1.6")
    vote = 0
    witnesses = []
    for spec in g["initial_witness_candidates"]:
        owner = state.account_by_name[spec["owner_name"]]
        w = state.create("1.6", {"witness_account": owner, "last_aslot": 0,
                                 "signing_key": spec["block_signing_key"],
                                 "vote_id": f"1:{vote}", "total_votes": 0, "url": "",
                                 "total_missed": 0, "last_confirmed_block_num": 0})
        witnesses.append(w["id"])
        vote += 1
    for spec in g["initial_committee_candidates"]:
        owner = state.account_by_name[spec["owner_name"]]
        state.create("1.5", {"committee_member_account": owner, "vote_id": f"0:{vote}",
                             "total_votes": 0, "url": ""})
        vote += 1
    active_count = int(g.get("initial_active_witnesses", len(witnesses)))
    state.create("2.0", {
        # a copy: the state's parameters must not alias (and later change)
        # the genesis data other chains are built from
        "parameters": copy.deepcopy(g["initial_parameters"]),
        "next_available_vote_id": vote,
        # elected at the first maintenance (block 1)
        "active_committee_members": [],
        "active_witnesses": witnesses[:active_count],
    })
    state.create("2.1", {
        "head_block_number": 0,
        "head_block_id": "0" * 40,
        "time": t0,
        "current_witness": "1.6.0",
        # the epoch (dynamic_global_property_object's defaults): block 1
        # is at or after it, so it runs the first maintenance
        "next_maintenance_time": 0,
        "last_vote_tally_time": 0,
        "last_budget_time": 0,
        "witness_budget": 0,
        "total_pob": 0,
        "total_inactive": 0,
        "accounts_registered_this_interval": registered,
        "recently_missed_count": 0,
        "current_aslot": 0,
        "recent_slots_filled": str(ALL_SLOTS_FILLED),
        "dynamic_flags": 0,
        "last_irreversible_block_num": 0,
    })
    state.create("2.11", {"chain_id": genesis.chain_id,
                          "immutable_parameters": g.get("immutable_parameters", {})})
    # graphene db_genesis.cpp "Create witness scheduler": the active witnesses
    # in order until the first reshuffle (nodeapi.chain.schedule)
    state.create("2.12", {"current_shuffled_witnesses": witnesses[:active_count]})
    for bal in g["initial_balances"]:
        asset_id = state.asset_by_symbol[bal["asset_symbol"]]
        state.create("1.15", {"owner": bal["owner"],
                              "balance": asset(amount_of(bal), asset_id),
                              "last_claim_date": 0})
    if handed_out > 0:
        # the genesis balances take the committee account's whole supply
        adjust_balance(state, COMMITTEE_ACCOUNT, CORE_ASSET, -MAX_SHARE_SUPPLY)
    for _ in range(FBA_ACCUMULATORS):
        state.create("2.16", {"accumulated_fba_fees": 0,
                              "designated_asset": FBA_STEALTH_DESIGNATED_ASSET})
    state.reset_changed()
    return state
