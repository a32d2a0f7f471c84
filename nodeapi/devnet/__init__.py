"""The devnet (``twistd nodeapi --devnet``): a local chain for tests, as
anvil and the hardhat network are for Ethereum.  :mod:`.control` (the
service), :mod:`.accounts` (ready accounts), :mod:`.snapshots` (state
snapshots, dump and load), :mod:`.pytest_plugin` (the ``nodeapi_devnet``
and ``nodeapi_snapshot`` fixtures)."""
