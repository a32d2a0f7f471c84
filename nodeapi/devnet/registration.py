"""The code that tells each client the devnet's chain: python-bitshares
refuses a chain id it does not know, and bitsharesjs falls back to the
``CBA`` key prefix.  Printed in the devnet's start banner
(:func:`nodeapi.devnet.accounts.table`) and used by the pytest plugin; the
standard library only (the plugin is imported by every pytest run)."""

#: the name the devnet's chain is registered under in each client
NETWORK_NAME = "NODEAPI_DEVNET"


def registration_lines(chain_id: str) -> dict:
    """``{"python-bitshares": line, "bitsharesjs": line}``: the statement
    that registers chain ``chain_id`` (64 hex digits; core asset and key
    prefix ``TEST``) with python-bitshares (``known_chains``, before
    ``BitShares(url)``) and bitsharesjs (``bitsharesjs-ws``
    ``ChainConfig.networks``, before ``Apis.instance(url, true)``, which
    then takes the prefix from the chain id the node answers)."""
    return {
        "python-bitshares": "from bitsharesbase.chains import known_chains; "
                            f"known_chains['{NETWORK_NAME}'] = {{'chain_id': '{chain_id}', "
                            "'core_symbol': 'TEST', 'prefix': 'TEST'}",
        "bitsharesjs": f"require('bitsharesjs-ws').ChainConfig.networks.{NETWORK_NAME} = "
                       f"{{core_asset: 'TEST', address_prefix: 'TEST', chain_id: '{chain_id}'}};",
    }
