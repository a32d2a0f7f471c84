# -*- coding: utf-8 -*-
"""Replacement for python-bitshares' tests/testnet/conftest.py: the suite's
node, a bitshares-core testnet in docker, becomes nodeapi's devnet (the
``nodeapi_devnet`` fixture of nodeapi's pytest plugin).

The devnet runs the same genesis as the suite's docker node
(tests/testnet/node_config/genesis.json, chain id 569cba9a...) with
init0..init10 on the published development key, so ``private_keys`` and
``default_account`` are the suite's own.  Run the suite with
``NODEAPI_DEVNET_ARGS="--block-interval 1"``: the suite expects a chain
that makes a block every second, as the docker testnet does.
"""
import asyncio
import os
import tempfile
from urllib.parse import urlsplit

import pytest

# python-bitshares keeps its config (default_account, ...) in
# $XDG_DATA_HOME/bitshares: a fresh one for this run, not the user's.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="pbts-config-")

import graphenebase.ecdsa  # noqa: E402
import grapheneapi.aio.websocket as _aio_websocket  # noqa: E402
import websockets  # noqa: E402
from bitsharesbase.chains import known_chains  # noqa: E402

# graphenelib's "cryptography" signer fails with current cryptography and
# ecdsa packages; its pure-python "ecdsa" signer works.
graphenebase.ecdsa.SECP256K1_MODULE = "ecdsa"


class _WithoutLoop:
    """``module`` whose Queue, Event and connect take no ``loop=``:
    graphenelib 1.6.1's aio websocket passes it, which Python >= 3.10 and
    websockets >= 10 refuse (nodeapi needs Python >= 3.11)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if name not in ("Queue", "Event", "connect"):
            return value

        def call(*args, loop=None, **kwargs):
            return value(*args, **kwargs)

        return call


_aio_websocket.asyncio = _WithoutLoop(asyncio)
_aio_websocket.websockets = _WithoutLoop(websockets)

# the suite's own line: the chain id of its genesis (the devnet's too)
known_chains["TEST"][
    "chain_id"
] = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"


@pytest.fixture(scope="session")
def private_keys():
    return ["5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"]


@pytest.fixture(scope="session")
def default_account():
    return "init0"


class _Node:
    """What the suite reads of its docker container: ``service_port``."""

    def __init__(self, devnet):
        self.devnet = devnet
        self.service_port = urlsplit(devnet.url).port


@pytest.fixture(scope="session")
def bitshares_testnet(nodeapi_devnet):
    """The node: nodeapi's devnet instead of a bitshares-core container."""
    assert nodeapi_devnet.chain_id == known_chains["TEST"]["chain_id"]
    return _Node(nodeapi_devnet)


@pytest.fixture(scope="session", autouse=True)
def client_config(request, default_account):
    """What the suite expects of a developer's python-bitshares config:
    ``default_account`` set (``uptick set default_account init0``).

    With DEVNET_CLIENT_EXPIRATION=N the suite's instance also stamps its
    transactions N seconds after the wall clock instead of 30: the devnet's
    head block runs ahead of the wall clock (each transaction gets its own
    block at the next free one-second slot)."""
    instance = request.getfixturevalue("bitshares_instance")
    instance.config["default_account"] = default_account
    seconds = os.environ.get("DEVNET_CLIENT_EXPIRATION")
    if seconds:
        instance.expiration = int(seconds)
        instance.txbuffer.set_expiration(int(seconds))
