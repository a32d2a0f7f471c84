"""The custom operations API set (``custom_operations`` /
``custom_operations_api``): account storage maps from the
``custom_operations`` plugin.

Graphene reference: bitshares-core libraries/app/api.cpp
``custom_operations_api::get_storage_info`` (``get_objects_by_x`` over the
plugin's indexes; limit ``api-limit-get-storage-info``, 101) over
:class:`nodeapi.plugins.custom_operations.storage.AccountStorage`
(``node.plugins["custom_operations"]``).
"""

from nodeapi.api.base import ApiSet, api_function
from nodeapi.api.database.listing import optional_limit, page, start_key
from nodeapi.api.lookup import get_account
from nodeapi.errors import ApiError


def _optional_str(value, what: str):
    if value is not None and not isinstance(value, str):
        raise ApiError(f"{what} must be a string or null, got {value!r}")
    return value


class CustomOperationsApi(ApiSet):
    """graphene ``custom_operations_api`` (module text)."""

    name = "custom_operations"

    @api_function
    def get_storage_info(self, account_name_or_id=None, catalog=None, key=None, limit=None,
                         start_id=None):
        """Account storage objects ``7.0.N`` ``{id, account, catalog, key,
        value}`` of an account and/or catalog (and key), in id order from
        ``start_id``, at most ``limit`` (default and maximum
        ``api-limit-get-storage-info``).

        :raises ApiError: the plugin is not enabled, an unknown account, or
            a key without a catalog."""
        plugin = self.node.plugins.get("custom_operations")
        if plugin is None:
            raise ApiError("The custom_operations plugin is not enabled")
        account = _optional_str(account_name_or_id, "account_name_or_id")
        catalog = _optional_str(catalog, "catalog")
        key = _optional_str(key, "key")
        if account is not None:
            account = get_account(self.node.chain.state, account)["id"]
        if catalog is None and key is not None:
            raise ApiError("Can not specify key if catalog is not specified")
        limit = optional_limit(limit, self.node.limits.get_storage_info)
        return page(plugin.find(account, catalog, key), start_key(start_id, "7.0"), limit)
