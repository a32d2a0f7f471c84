"""database API: objects, globals, blocks and transactions, keys, witnesses,
committee members and vote ids (a mixin of
:class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp sections
"Objects", "Blocks and transactions", "Globals", "Keys", "Witnesses",
"Committee members", "Votes"; libraries/chain/get_config.cpp for
``get_config``.  Objects are returned in the wire shapes the chain stores
(wire-contract.md section 7); unknown ids give ``null`` where graphene
returns an optional.
"""


from nodeapi.api.base import api_function
from nodeapi.api.database_common import (
    api_limit, check_count, check_limit, get_account, id_key, parse_object_id,
    require_list, require_str, typed_id)
from nodeapi.errors import ApiError, ProtocolError
from nodeapi.protocol.keys import public_key_bytes

# graphene::chain::get_config() values of bitshares-core (config.hpp); the
# symbol and address prefix come from this chain's genesis.
_CONFIG = {
    "GRAPHENE_MIN_ACCOUNT_NAME_LENGTH": 1,
    "GRAPHENE_MAX_ACCOUNT_NAME_LENGTH": 63,
    "GRAPHENE_MIN_ASSET_SYMBOL_LENGTH": 3,
    "GRAPHENE_MAX_ASSET_SYMBOL_LENGTH": 16,
    "GRAPHENE_MAX_SHARE_SUPPLY": 1000000000000000,
    "GRAPHENE_MAX_PAY_RATE": 10000,
    "GRAPHENE_MAX_SIG_CHECK_DEPTH": 2,
    "GRAPHENE_MIN_TRANSACTION_SIZE_LIMIT": 1024,
    "GRAPHENE_MIN_BLOCK_INTERVAL": 1,
    "GRAPHENE_MAX_BLOCK_INTERVAL": 30,
    "GRAPHENE_DEFAULT_BLOCK_INTERVAL": 5,
    "GRAPHENE_DEFAULT_MAX_TRANSACTION_SIZE": 2048,
    "GRAPHENE_DEFAULT_MAX_BLOCK_SIZE": 2000000,
    "GRAPHENE_DEFAULT_MAX_TIME_UNTIL_EXPIRATION": 86400,
    "GRAPHENE_DEFAULT_MAINTENANCE_INTERVAL": 86400,
    "GRAPHENE_DEFAULT_MAINTENANCE_SKIP_SLOTS": 3,
    "GRAPHENE_MIN_UNDO_HISTORY": 10,
    "GRAPHENE_MAX_UNDO_HISTORY": 10000,
    "GRAPHENE_MIN_BLOCK_SIZE_LIMIT": 5120,
    "GRAPHENE_MIN_TRANSACTION_EXPIRATION_LIMIT": 150,
    "GRAPHENE_BLOCKCHAIN_PRECISION": 100000,
    "GRAPHENE_BLOCKCHAIN_PRECISION_DIGITS": 5,
    "GRAPHENE_DEFAULT_TRANSFER_FEE": 100000,
    "GRAPHENE_MAX_INSTANCE_ID": 281474976710655,
    "GRAPHENE_100_PERCENT": 10000,
    "GRAPHENE_1_PERCENT": 100,
    "GRAPHENE_MAX_MARKET_FEE_PERCENT": 10000,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_DELAY": 86400,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_OFFSET": 0,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_MAX_VOLUME": 2000,
    "GRAPHENE_DEFAULT_PRICE_FEED_LIFETIME": 86400,
    "GRAPHENE_MAX_FEED_PRODUCERS": 200,
    "GRAPHENE_DEFAULT_MAX_AUTHORITY_MEMBERSHIP": 10,
    "GRAPHENE_DEFAULT_MAX_ASSET_WHITELIST_AUTHORITIES": 10,
    "GRAPHENE_DEFAULT_MAX_ASSET_FEED_PUBLISHERS": 10,
    "GRAPHENE_COLLATERAL_RATIO_DENOM": 1000,
    "GRAPHENE_MIN_COLLATERAL_RATIO": 1001,
    "GRAPHENE_MAX_COLLATERAL_RATIO": 32000,
    "GRAPHENE_DEFAULT_MAINTENANCE_COLLATERAL_RATIO": 1750,
    "GRAPHENE_DEFAULT_MAX_SHORT_SQUEEZE_RATIO": 1500,
    "GRAPHENE_DEFAULT_MARGIN_PERIOD_SEC": 2592000,
    "GRAPHENE_DEFAULT_MAX_WITNESSES": 1001,
    "GRAPHENE_DEFAULT_MAX_COMMITTEE": 1001,
    "GRAPHENE_DEFAULT_MAX_PROPOSAL_LIFETIME_SEC": 2419200,
    "GRAPHENE_DEFAULT_COMMITTEE_PROPOSAL_REVIEW_PERIOD_SEC": 1209600,
    "GRAPHENE_DEFAULT_NETWORK_PERCENT_OF_FEE": 2000,
    "GRAPHENE_DEFAULT_LIFETIME_REFERRER_PERCENT_OF_FEE": 3000,
    "GRAPHENE_DEFAULT_MAX_BULK_DISCOUNT_PERCENT": 5000,
    "GRAPHENE_DEFAULT_BULK_DISCOUNT_THRESHOLD_MIN": 100000000,
    "GRAPHENE_DEFAULT_BULK_DISCOUNT_THRESHOLD_MAX": 10000000000,
    "GRAPHENE_DEFAULT_CASHBACK_VESTING_PERIOD_SEC": 31536000,
    "GRAPHENE_DEFAULT_CASHBACK_VESTING_THRESHOLD": 10000000,
    "GRAPHENE_DEFAULT_BURN_PERCENT_OF_FEE": 2000,
    "GRAPHENE_WITNESS_PAY_PERCENT_PRECISION": 1000000000,
    "GRAPHENE_DEFAULT_MAX_ASSERT_OPCODE": 1,
    "GRAPHENE_DEFAULT_FEE_LIQUIDATION_THRESHOLD": 10000000,
    "GRAPHENE_DEFAULT_ACCOUNTS_PER_FEE_SCALE": 1000,
    "GRAPHENE_DEFAULT_ACCOUNT_FEE_SCALE_BITSHIFTS": 4,
    "GRAPHENE_MAX_WORKER_NAME_LENGTH": 63,
    "GRAPHENE_MAX_URL_LENGTH": 127,
    "GRAPHENE_NEAR_SCHEDULE_CTR_IV": 0x6A09E667F3BCC908,
    "GRAPHENE_FAR_SCHEDULE_CTR_IV": 0xBB67AE8584CAA73B,
    "GRAPHENE_CORE_ASSET_CYCLE_RATE": 17,
    "GRAPHENE_CORE_ASSET_CYCLE_RATE_BITS": 32,
    "GRAPHENE_DEFAULT_WITNESS_PAY_PER_BLOCK": 1000000,
    "GRAPHENE_DEFAULT_WITNESS_PAY_VESTING_SECONDS": 86400,
    "GRAPHENE_DEFAULT_WORKER_BUDGET_PER_DAY": 50000000000,
    "GRAPHENE_MAX_INTEREST_APR": 10000,
    "GRAPHENE_COMMITTEE_ACCOUNT": "1.2.0",
    "GRAPHENE_WITNESS_ACCOUNT": "1.2.1",
    "GRAPHENE_RELAXED_COMMITTEE_ACCOUNT": "1.2.2",
    "GRAPHENE_NULL_ACCOUNT": "1.2.3",
    "GRAPHENE_TEMP_ACCOUNT": "1.2.4",
}

# Object types whose subscription graphene skips in get_objects.
_NO_SUBSCRIBE = ("1.11.", "2.9.")


def check_public_key(key, prefix: str) -> str:
    """``key`` if it is a public key string of this chain (``TEST6MRy...``);
    raises :class:`ApiError` otherwise (graphene ``public_key_type``)."""
    if not isinstance(key, str) or not key.startswith(prefix) or len(key) != len(prefix) + 50:
        raise ApiError(f"Invalid public key {key!r}: expected a {prefix}... key")
    try:
        public_key_bytes(key, prefix)
    except ProtocolError:
        raise ApiError(f"Invalid public key {key!r}: bad encoding or checksum") from None
    return key


class GlobalsMixin:
    """Objects, globals, blocks, keys, witnesses, committee, votes."""

    @property
    def chain(self):
        return self.node.chain

    # -- objects -----------------------------------------------------------------

    @api_function
    def get_objects(self, ids, subscribe=None):
        """``[object | null]`` for ``ids`` (any ``space.type.instance``), in
        order; existing objects are subscribed (module
        :mod:`~nodeapi.api.database_subscriptions`) except operation history
        ``1.11.N`` and ``2.9.N``.  At most ``api-limit-get-objects`` ids."""
        ids = require_list(ids, "ids")
        check_count(len(ids), api_limit(self.node, "get_objects", 100), "objects")
        parsed = [parse_object_id(i) for i in ids]
        to_subscribe = self._whether_to_subscribe(subscribe)
        objects = self.chain.state.objects
        result = []
        for oid in parsed:
            obj = objects.get(oid)
            if obj is not None and to_subscribe and not oid.startswith(_NO_SUBSCRIBE):
                self._subscribe_to_item(oid)
            result.append(obj)
        return result

    # -- globals -----------------------------------------------------------------

    @api_function
    def get_chain_properties(self):
        """Object ``2.11.0``: ``{id, chain_id, immutable_parameters}``."""
        return self.chain.state.objects["2.11.0"]

    @api_function
    def get_global_properties(self):
        """Object ``2.0.0``: parameters, active witnesses and committee."""
        return self.chain.state.objects["2.0.0"]

    @api_function
    def get_dynamic_global_properties(self):
        """Object ``2.1.0``: head block number/id/time, current witness,
        last irreversible block, ..."""
        return self.chain.state.objects["2.1.0"]

    @api_function
    def get_chain_id(self):
        """The chain id, hex (sha256 of the genesis file)."""
        return self.chain.chain_id

    @api_function
    def get_config(self):
        """graphene's compile-time constants (``GRAPHENE_*``), with this
        chain's core symbol and address prefix."""
        config = {"GRAPHENE_SYMBOL": self.chain.state.objects["1.3.0"]["symbol"],
                  "GRAPHENE_ADDRESS_PREFIX": self.chain.address_prefix}
        config.update(_CONFIG)
        return config

    # -- blocks and transactions ---------------------------------------------------

    @api_function
    def get_block_header(self, block_num: int):
        """Header ``{previous, timestamp, witness, transaction_merkle_root,
        extensions}`` of block ``block_num``, or null."""
        return self.chain.get_block_header(block_num) if block_num > 0 else None

    @api_function
    def get_block_header_batch(self, block_nums):
        """``[[num, header | null], ...]`` ascending by number, each number
        once (graphene returns a ``map<uint32_t, optional<block_header>>``)."""
        nums = set()
        for n in require_list(block_nums, "block_nums"):
            if isinstance(n, bool) or not isinstance(n, (int, str)) or not str(n).isdigit():
                raise ApiError(f"block_nums: expected block numbers, got {n!r}")
            nums.add(int(n))
        check_count(len(nums), api_limit(self.node, "get_blocks", 100), "blocks")
        return [[n, self.get_block_header(n)] for n in sorted(nums)]

    @api_function
    def get_block(self, block_num: int):
        """Signed block ``block_num`` (header, ``witness_signature``,
        ``transactions``), or null."""
        return self.chain.get_block(block_num) if block_num > 0 else None

    @api_function
    def get_transaction(self, block_num: int, trx_in_block: int):
        """Transaction ``trx_in_block`` (0-based) of block ``block_num``.

        :raises ApiError: no such block, or the block has fewer transactions.
        """
        block = self.chain.get_block(block_num) if block_num > 0 else None
        if block is None:
            raise ApiError(f"Block {block_num} does not exist")
        trxs = block["transactions"]
        if not 0 <= trx_in_block < len(trxs):
            raise ApiError(f"Block {block_num} has {len(trxs)} transaction(s); "
                           f"no transaction {trx_in_block}")
        return trxs[trx_in_block]

    # -- keys --------------------------------------------------------------------

    @api_function
    def get_key_references(self, keys):
        """For each public key, the sorted ids of the accounts using it in
        their owner, active or memo key (graphene ``account_member_index``).
        At most ``api-limit-get-key-references`` keys."""
        keys = require_list(keys, "keys")
        check_count(len(keys), api_limit(self.node, "get_key_references", 100), "keys")
        prefix = self.chain.address_prefix
        refs = self.chain.state.key_references
        return [sorted(refs.get(check_public_key(k, prefix), ()), key=id_key) for k in keys]

    @api_function
    def is_public_key_registered(self, public_key):
        """True if a registered account uses ``public_key``; false for an
        unknown or malformed key."""
        try:
            key = check_public_key(public_key, self.chain.address_prefix)
        except ApiError:
            return False
        return bool(self.chain.state.key_references.get(key))

    # -- witnesses and committee members ---------------------------------------

    def _objects_by_ids(self, ids, space_type: str, what: str) -> list:
        objects = self.chain.state.objects
        ids = require_list(ids, what + "s")
        check_count(len(ids), api_limit(self.node, "get_objects", 100), what + "s")
        return [objects.get(typed_id(i, space_type, what + " id")) for i in ids]

    def _lookup_by_name(self, space_type: str, account_field: str, lower_bound_name,
                        limit: int, option: str) -> list:
        require_str(lower_bound_name, "lower_bound_name")
        check_limit(limit, api_limit(self.node, option, 1000))
        state = self.chain.state
        found = []
        for oid in state.ids_of_type(space_type + "."):
            account = state.objects.get(state.objects[oid][account_field])
            if account is not None and account["name"] >= lower_bound_name:
                found.append((account["name"], oid))
        found.sort()
        return [list(pair) for pair in found[:limit]]

    @api_function
    def get_witnesses(self, witness_ids):
        """``[witness | null]`` for ``1.6.N`` ids."""
        return self._objects_by_ids(witness_ids, "1.6", "witness")

    @api_function
    def get_witness_by_account(self, account_id_or_name):
        """The witness object of an account (name or id), or null;
        ``no such account`` for an unknown account."""
        account = get_account(self.chain.state, account_id_or_name)
        return self.chain.state.witness_of(account["id"])

    @api_function
    def lookup_witness_accounts(self, lower_bound_name, limit: int):
        """``[[account name, witness id], ...]`` by name from
        ``lower_bound_name``; ``limit`` <= ``api-limit-lookup-witness-accounts``
        (1000)."""
        return self._lookup_by_name("1.6", "witness_account", lower_bound_name, limit,
                                    "lookup_witness_accounts")

    @api_function
    def get_witness_count(self):
        """Number of witness objects."""
        return len(self.chain.state.ids_of_type("1.6."))

    @api_function
    def get_committee_members(self, committee_member_ids):
        """``[committee member | null]`` for ``1.5.N`` ids."""
        return self._objects_by_ids(committee_member_ids, "1.5", "committee member")

    @api_function
    def get_committee_member_by_account(self, account_id_or_name):
        """The committee member object of an account, or null."""
        state = self.chain.state
        account = get_account(state, account_id_or_name)
        cid = state.committee_member_by_account.get(account["id"])
        return state.objects.get(cid) if cid else None

    @api_function
    def lookup_committee_member_accounts(self, lower_bound_name, limit: int):
        """``[[account name, committee member id], ...]`` by name."""
        return self._lookup_by_name("1.5", "committee_member_account", lower_bound_name,
                                    limit, "lookup_committee_member_accounts")

    @api_function
    def get_committee_count(self):
        """Number of committee member objects."""
        return len(self.chain.state.ids_of_type("1.5."))

    # -- votes -------------------------------------------------------------------

    def _vote_objects(self, votes: list) -> list:
        """Witness / committee member objects by ``"type:instance"`` vote id
        (0 committee, 1 witness, 2 worker), null when unknown."""
        state = self.chain.state
        by_vote = {}
        for space_type in ("1.5.", "1.6."):
            for oid in state.ids_of_type(space_type):
                by_vote[state.objects[oid]["vote_id"]] = state.objects[oid]
        result = []
        for vote in votes:
            kind, sep, instance = vote.partition(":") if isinstance(vote, str) else ("", "", "")
            if not sep or kind not in ("0", "1", "2") or not instance.isdigit():
                raise ApiError(f"Invalid vote id {vote!r}: expected type:instance, type 0-2")
            result.append(by_vote.get(f"{kind}:{int(instance)}"))
        return result

    @api_function
    def lookup_vote_ids(self, votes):
        """Objects voted for by ``"type:instance"`` vote ids (committee
        members, witnesses; workers do not exist on this chain), null when
        unknown.  At most ``api-limit-lookup-vote-ids`` (1000) ids."""
        votes = require_list(votes, "votes")
        check_count(len(votes), api_limit(self.node, "lookup_vote_ids", 1000), "votes")
        return self._vote_objects(votes)
