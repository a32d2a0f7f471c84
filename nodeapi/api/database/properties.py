"""database API, graphene section "Globals": the chain, global and dynamic
global property objects, the chain id and graphene's configuration constants
(a section of :class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Globals" and libraries/chain/get_config.cpp for ``get_config``.  The
property objects are returned in the wire shapes the chain stores
(wire-contract section 7).
"""

from nodeapi.api.base import Section, api_function
from nodeapi.errors import ApiError

# graphene::chain::get_config() of bitshares-core 7.0 (get_config.cpp: its
# keys in its order, config.hpp values); the symbol and address prefix,
# its first two keys, come from this chain's genesis.
_CONFIG = {
    "GRAPHENE_MIN_ACCOUNT_NAME_LENGTH": 1,
    "GRAPHENE_MAX_ACCOUNT_NAME_LENGTH": 63,
    "GRAPHENE_MIN_ASSET_SYMBOL_LENGTH": 3,
    "GRAPHENE_MAX_ASSET_SYMBOL_LENGTH": 16,
    "GRAPHENE_MAX_SHARE_SUPPLY": 1000000000000000,
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
    "GRAPHENE_BLOCKCHAIN_PRECISION": 100000,
    "GRAPHENE_BLOCKCHAIN_PRECISION_DIGITS": 5,
    "GRAPHENE_100_PERCENT": 10000,
    "GRAPHENE_1_PERCENT": 100,
    "GRAPHENE_MAX_MARKET_FEE_PERCENT": 10000,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_DELAY": 86400,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_OFFSET": 0,
    "GRAPHENE_DEFAULT_FORCE_SETTLEMENT_MAX_VOLUME": 2000,
    "GRAPHENE_DEFAULT_PRICE_FEED_LIFETIME": 86400,
    "GRAPHENE_DEFAULT_MAX_AUTHORITY_MEMBERSHIP": 10,
    "GRAPHENE_DEFAULT_MAX_ASSET_WHITELIST_AUTHORITIES": 10,
    "GRAPHENE_DEFAULT_MAX_ASSET_FEED_PUBLISHERS": 10,
    "GRAPHENE_COLLATERAL_RATIO_DENOM": 1000,
    "GRAPHENE_MIN_COLLATERAL_RATIO": 1001,
    "GRAPHENE_MAX_COLLATERAL_RATIO": 32000,
    "GRAPHENE_DEFAULT_MAINTENANCE_COLLATERAL_RATIO": 1750,
    "GRAPHENE_DEFAULT_MAX_SHORT_SQUEEZE_RATIO": 1500,
    "GRAPHENE_DEFAULT_MAX_WITNESSES": 1001,
    "GRAPHENE_DEFAULT_MAX_COMMITTEE": 1001,
    "GRAPHENE_DEFAULT_MAX_PROPOSAL_LIFETIME_SEC": 2419200,
    "GRAPHENE_DEFAULT_COMMITTEE_PROPOSAL_REVIEW_PERIOD_SEC": 1209600,
    "GRAPHENE_DEFAULT_NETWORK_PERCENT_OF_FEE": 2000,
    "GRAPHENE_DEFAULT_LIFETIME_REFERRER_PERCENT_OF_FEE": 3000,
    "GRAPHENE_DEFAULT_CASHBACK_VESTING_PERIOD_SEC": 31536000,
    "GRAPHENE_DEFAULT_CASHBACK_VESTING_THRESHOLD": 10000000,
    "GRAPHENE_DEFAULT_BURN_PERCENT_OF_FEE": 2000,
    "GRAPHENE_DEFAULT_MAX_ASSERT_OPCODE": 1,
    "GRAPHENE_DEFAULT_FEE_LIQUIDATION_THRESHOLD": 10000000,
    "GRAPHENE_DEFAULT_ACCOUNTS_PER_FEE_SCALE": 1000,
    "GRAPHENE_DEFAULT_ACCOUNT_FEE_SCALE_BITSHIFTS": 4,
    "GRAPHENE_MAX_WORKER_NAME_LENGTH": 63,
    "GRAPHENE_MAX_URL_LENGTH": 127,
    "GRAPHENE_CORE_ASSET_CYCLE_RATE": 17,
    "GRAPHENE_CORE_ASSET_CYCLE_RATE_BITS": 32,
    "GRAPHENE_DEFAULT_WITNESS_PAY_PER_BLOCK": 1000000,
    "GRAPHENE_DEFAULT_WITNESS_PAY_VESTING_SECONDS": 86400,
    "GRAPHENE_DEFAULT_WORKER_BUDGET_PER_DAY": 50000000000,
    "GRAPHENE_COMMITTEE_ACCOUNT": "1.2.0",
    "GRAPHENE_WITNESS_ACCOUNT": "1.2.1",
    "GRAPHENE_RELAXED_COMMITTEE_ACCOUNT": "1.2.2",
    "GRAPHENE_NULL_ACCOUNT": "1.2.3",
    "GRAPHENE_TEMP_ACCOUNT": "1.2.4",
}


#: The object kinds of bitshares-core 7.x (protocol space 1: 1.0 null ..
#: 1.22 credit deal; implementation space 2: 2.0 global properties ..
#: 2.18 credit deal summary), libraries/protocol/include/graphene/protocol/
#: types.hpp and libraries/chain/include/graphene/chain/types.hpp.
KNOWN_KINDS = frozenset([f"1.{t}" for t in range(23)] + [f"2.{t}" for t in range(19)])


class Globals(Section):
    """Chain properties, global properties, chain id, configuration."""

    @api_function(shared=True)
    def get_chain_properties(self):
        """Object ``2.11.0``: ``{id, chain_id, immutable_parameters}``."""
        return self.chain.state.objects["2.11.0"]

    @api_function(shared=True)
    def get_global_properties(self):
        """Object ``2.0.0``: parameters, active witnesses and committee."""
        return self.chain.state.objects["2.0.0"]

    @api_function(shared=True)
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

    @api_function
    def get_next_object_id(self, space_id: int, type_id: int, with_pending_transactions: bool):
        """The id the next object of ``space_id.type_id`` will get:
        ``"space.type.N"``.  With ``with_pending_transactions`` false the
        pending transactions are not counted (graphene reads the
        api_helper_indexes plugin's index of the last block; here the count
        the head block left).

        :raises ApiError: a space or type out of 0..255, or a kind the
            chain has no index of."""
        if not (0 <= space_id <= 255 and 0 <= type_id <= 255):
            raise ApiError(f"Invalid object kind {space_id}.{type_id}")
        kind = f"{space_id}.{type_id}"
        if kind not in KNOWN_KINDS:
            raise ApiError(f"No index of objects {kind}.N")
        return f"{kind}.{self.chain.next_object_instance(kind, with_pending_transactions)}"
