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
from nodeapi.protocol.config import CORE_ASSET, GET_CONFIG

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
        config = {"GRAPHENE_SYMBOL": self.chain.state.objects[CORE_ASSET]["symbol"],
                  "GRAPHENE_ADDRESS_PREFIX": self.chain.address_prefix}
        config.update(GET_CONFIG)
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
