"""database API, graphene section "Keys": which accounts use a public key
(a section of :class:`nodeapi.api.database.DatabaseApi`).

Graphene reference: bitshares-core libraries/app/database_api.cpp section
"Keys" (``get_key_references``, ``is_public_key_registered``; the
``account_member_index`` of owner, active and memo keys).
"""

from nodeapi.api.arguments import (
    check_count, check_public_key, id_key, require_list)
from nodeapi.api.base import Section, api_function
from nodeapi.errors import ApiError


class Keys(Section):
    """Key references."""

    @api_function
    def get_key_references(self, keys):
        """For each public key, the sorted ids of the accounts using it in
        their owner, active or memo key (graphene ``account_member_index``).
        At most ``api-limit-get-key-references`` keys."""
        keys = require_list(keys, "keys")
        check_count(len(keys), self.node.limits.get_key_references, "keys")
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
