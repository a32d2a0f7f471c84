"""The graphene protocol core: ids, keys, fc binary serialization,
transactions, blocks, and per operation type its authorities, impacted
accounts, fees and validate() rules.  Pure Python (no Twisted), so the
chain, the API sets and the history plugin share it.  See docs/DESIGN.rst
("nodeapi/protocol/") for the names other modules import from here.
"""

from nodeapi.protocol.errors import (  # noqa: F401
    IntegerOutOfRange, InvalidBase58, InvalidChecksum, InvalidField, InvalidHex, InvalidKey,
    InvalidObjectId, InvalidSignature, InvalidTime, NonCanonicalSignature, TruncatedData,
    UnknownOperation, WrongKeyPrefix)
from nodeapi.protocol.ids import ObjectId  # noqa: F401
from nodeapi.protocol.keys import (  # noqa: F401
    Address, PrivateKey, PublicKey, balance_addresses, is_canonical)
from nodeapi.protocol.times import format_time, parse_time  # noqa: F401
from nodeapi.protocol.operations import (  # noqa: F401
    OPERATIONS, deserialize_operation, serialize_operation, serialize_operation_body)
from nodeapi.protocol.transaction import (  # noqa: F401
    deserialize_transaction, recover_signers, serialize_signed_transaction,
    serialize_transaction, sign_transaction, signature_digest, transaction_id)
from nodeapi.protocol.block import (  # noqa: F401
    block_header_bytes, block_id, block_signing_digest, merkle_root, recover_block_signer,
    sign_block)
from nodeapi.protocol.impacted import (  # noqa: F401
    fee_payer, impacted_accounts, other_authorities, required_authorities)
from nodeapi.protocol.fee_schedule import operation_fee, required_fees  # noqa: F401
from nodeapi.protocol.validation import validate_operation  # noqa: F401
