"""Signed transactions for tests: the one TaPoS rule (graphene
``transaction::set_reference_block``: ref_block_num is the low 16 bits of
the head number, ref_block_prefix the second 32-bit word of the head id)
and the signers built on it.

- :func:`sign`: python-bitshares (bitsharesbase) operation objects, signed
  by python-bitshares, an implementation independent of nodeapi;
- :func:`sign_canonical`: the same, re-signed over nodeapi's canonical
  packing (graphene sorts flat_map entries; python-bitshares does not);
- :func:`sign_wire`: wire-JSON operations, signed by nodeapi's
  deterministic signer (same bytes in every process);
- :func:`signed_over_head`: :func:`sign` over a running daemon's head;
- :func:`sign_wire_over_head`: wire-JSON operations with the fees the node
  asks, signed by nodeapi's signer over that node's head (a reference
  node or a daemon: anything with ``call(method, *params)``)."""

import calendar
import struct
import time

import graphenebase.ecdsa
from bitsharesbase.chains import known_chains
from bitsharesbase.signedtransactions import Signed_Transaction

from nodeapi.chain import authority as chain_auth
from nodeapi.protocol.times import format_time
from nodeapi.protocol.transaction import sign_transaction, signature_digest

from kit.keys import CHAIN_ID, DEV_WIF

# python-bitshares' "cryptography" signer is broken with the installed ecdsa
# package; its pure "ecdsa" path works.  "TESTNODE" names the test chain.
graphenebase.ecdsa.SECP256K1_MODULE = "ecdsa"
known_chains["TESTNODE"] = {"chain_id": CHAIN_ID, "core_symbol": "TEST", "prefix": "TEST"}


def tapos(head_num, head_id, head_time, expire_in=60):
    """{ref_block_num, ref_block_prefix, expiration} over a head block
    (``head_time`` in seconds since the epoch)."""
    return {"ref_block_num": head_num & 0xFFFF,
            "ref_block_prefix": struct.unpack_from("<I", bytes.fromhex(head_id), 4)[0],
            "expiration": format_time(head_time + expire_in)}


def chain_tapos(chain, expire_in=60):
    """:func:`tapos` over ``chain``'s head."""
    return tapos(chain.head_block_num, chain.head_block_id, chain.head_block_time, expire_in)


def _bts_signed(ref, ops, wifs):
    t = Signed_Transaction(operations=ops, **ref)
    t.sign(list(wifs), "TESTNODE")
    return t.json()


def sign(chain, ops, wifs=(DEV_WIF,), expire_in=60):
    """Wire JSON of a transaction of ``ops`` (bitsharesbase operations)
    over ``chain``'s head, signed by python-bitshares with ``wifs``."""
    return _bts_signed(chain_tapos(chain, expire_in), ops, wifs)


def sign_canonical(chain, ops, wifs=(DEV_WIF,)):
    """A transaction built and signed by python-bitshares, re-signed over
    the canonical graphene packing (identical bytes unless an authority has
    several entries)."""
    trx = sign(chain, ops, wifs=wifs)
    digest = signature_digest(trx, CHAIN_ID, "TEST")
    trx["signatures"] = [chain_auth.sign_digest(digest, w) for w in wifs]
    return trx


def sign_wire(chain, ops, wif=DEV_WIF, expire_in=60):
    """A transaction of wire-JSON ``ops`` signed with nodeapi's
    (deterministic) signer, nodeapi.protocol.sign_transaction."""
    trx = dict(chain_tapos(chain, expire_in), operations=ops, extensions=[], signatures=[])
    return sign_transaction(trx, chain.chain_id, [wif], "TEST")


def signed_over_head(node, ops, wif=None):
    """A transaction of ``ops`` (bitsharesbase operations) over ``node``'s
    head block (``node.call`` is a daemon's JSON-RPC, kit.daemon.Daemon),
    expiring 60 s after the head time, signed by python-bitshares with the
    development key or ``wif``; returns its wire JSON."""
    props = node.call("get_dynamic_global_properties")
    head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
    ref = tapos(props["head_block_number"], props["head_block_id"], head_time)
    return _bts_signed(ref, ops, (wif or DEV_WIF,))


def sign_wire_over_head(node, ops, wif=DEV_WIF, expire_in=60):
    """A transaction of wire-JSON ``ops`` over ``node``'s head block, each
    operation's fee set to the core fee the node answers for it
    (``get_required_fees``; a fee already in an operation is kept), signed
    with nodeapi's signer with ``wif``.  ``node`` is a
    :class:`kit.reference.ReferenceNode` or a :class:`kit.daemon.Daemon`."""
    props = node.call("get_dynamic_global_properties")
    head_time = calendar.timegm(time.strptime(props["time"], "%Y-%m-%dT%H:%M:%S"))
    zero = [[t, dict(d, fee=d.get("fee") or {"amount": 0, "asset_id": "1.3.0"})]
            for t, d in ops]
    fees = node.call("get_required_fees", zero, "1.3.0")
    ops = [[t, d if "fee" in orig[1] else dict(d, fee=f if isinstance(f, dict) else f[0])]
           for (t, d), f, orig in zip(zero, fees, ops)]
    trx = dict(tapos(props["head_block_number"], props["head_block_id"], head_time, expire_in),
               operations=ops, extensions=[], signatures=[])
    return sign_transaction(trx, CHAIN_ID, [wif], "TEST")
