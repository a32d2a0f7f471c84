"""Errors of the chain core: one :class:`~nodeapi.errors.ChainError` subclass
per validation rule, so clients and tests can tell them apart.

Graphene reference: the ``FC_ASSERT``/``GRAPHENE_ASSERT`` checks of
``database::_apply_transaction``, ``verify_authority`` and the evaluators
(libraries/chain/*.cpp).  When one of these is raised nothing was applied.
"""

from nodeapi.errors import ASSERT_CODE, ASSERT_NAME, ASSERT_WHAT, ChainError
from nodeapi.protocol.errors import InvalidOperation, InvalidSignature  # noqa: F401  (one class each)


class FcAssertion(ChainError):
    """A rule bitshares-core checks with ``FC_ASSERT``: on the wire fc's
    ``assert_exception`` (code 10, ``data.message`` "Assert Exception"),
    whatever the rule; the Python subclasses tell the rules apart, the
    wire tells them apart only by the text (``Assert Exception:
    <expression>: <message>``, the stack's ``format`` without the
    prefix).  The names and codes of every chain error are set here and
    nowhere else (bitshares-fc exception.hpp, bitshares-core
    chain/exceptions.hpp and protocol/exceptions.hpp), but for the
    operation refusals: those are the one
    :class:`~nodeapi.protocol.errors.InvalidOperation` the protocol's
    ``validate()`` raises too, and its subclasses below."""

    name = ASSERT_NAME
    code = ASSERT_CODE
    what = ASSERT_WHAT


def assertion(cls, expression: str, message: str = "", details: dict | None = None,
              fc_format: str | None = None):
    """An ``FC_ASSERT( expression, message, values )`` failure as ``cls``
    (an :class:`FcAssertion`): text ``Assert Exception: <expression>:
    <message>`` (fc's ``to_string``: the message with its values put in),
    ``details`` the values (``error.data.stack[0].data``), ``fc_format``
    the message before its values were put in (``error.data.stack[0].format``
    is ``<expression>: <fc_format>``)."""
    error = cls(f"{ASSERT_WHAT}: {expression}: {message}")
    if details:
        error.details = details
    if fc_format is not None:
        error.fc_format = f"{expression}: {fc_format}"
    return error


class TransactionTooLarge(FcAssertion):
    """The serialized transaction exceeds maximum_transaction_size
    (db_block.cpp ``_apply_transaction``: ``FC_ASSERT( ... ||
    trx.get_packed_size() <= chain_parameters.maximum_transaction_size,
    "Transaction exceeds maximum transaction size." )``)."""


class EmptyTransaction(FcAssertion):
    """The transaction has no operations (graphene ``transaction::validate``:
    ``FC_ASSERT( operations.size() > 0, "A transaction must have at least one
    operation" )``)."""


class TransactionExpired(FcAssertion):
    """The transaction's expiration is before the head block time
    (db_block.cpp ``_apply_transaction``: ``FC_ASSERT( now <=
    trx.expiration, "", ("now",now)("trx.exp",trx.expiration) )``)."""


class ExpirationTooFar(FcAssertion):
    """The expiration is later than head time + maximum_time_until_expiration
    (db_block.cpp ``_apply_transaction``: ``FC_ASSERT( trx.expiration <=
    now + chain_parameters.maximum_time_until_expiration, "", ...)``)."""


class BadTaposReference(FcAssertion):
    """ref_block_num / ref_block_prefix do not match a block of this chain
    (db_block.cpp ``_apply_transaction``: ``FC_ASSERT( trx.ref_block_prefix
    == tapos_block_summary.block_id._hash[1].value() )``)."""


class DuplicateTransaction(ChainError):
    """A transaction with this id is already pending or in a recent block
    (db_block.cpp ``_apply_transaction``: ``GRAPHENE_ASSERT( ...,
    duplicate_transaction, "Transaction '${txid}' is already in the
    database", ("txid", trx.id()) )``)."""

    name = "duplicate_transaction"
    code = 3030001
    what = "duplicate transaction"

    def __init__(self, trx_id: str) -> None:
        super().__init__(f"duplicate transaction: Transaction '{trx_id}' is already in "
                         f"the database")
        self.fc_format = "Transaction '${txid}' is already in the database"
        self.details = {"txid": trx_id}


class MissingAuthority(ChainError):
    """The signatures do not satisfy an authority the operations require.

    The subclasses are graphene's transaction exceptions
    (libraries/protocol/small_ops.cpp, raised by ``verify_authority`` in
    transaction.cpp), with fc's code, name and text: the message is fc's
    ``to_string``, ``"<what>: <format with its values>"``, and ``details``
    the values of the format (``error.data.stack[0].data``)."""

    name = "missing_authority"


class MissingActiveAuthority(MissingAuthority):
    """missing required active authority

    ``tx_missing_active_auth``: "Missing Active Authority ${id}" with
    ``{"id", "auth", "owner"}`` (the account's active and owner
    authorities)."""

    code = 4010001
    name = "tx_missing_active_auth"
    what = "missing required active authority"
    fc_format = "Missing Active Authority ${id}"

    def __init__(self, account_id: str, active: dict, owner: dict) -> None:
        super().__init__(f"missing required active authority: Missing Active Authority "
                         f"{account_id}")
        self.details = {"id": account_id, "auth": active, "owner": owner}


class MissingOwnerAuthority(MissingAuthority):
    """missing required owner authority

    ``tx_missing_owner_auth``: "Missing Owner Authority ${id}" with
    ``{"id", "auth"}`` (the account's owner authority)."""

    code = 4010002
    name = "tx_missing_owner_auth"
    what = "missing required owner authority"
    fc_format = "Missing Owner Authority ${id}"

    def __init__(self, account_id: str, owner: dict) -> None:
        super().__init__(f"missing required owner authority: Missing Owner Authority "
                         f"{account_id}")
        self.details = {"id": account_id, "auth": owner}


class MissingOtherAuthority(MissingAuthority):
    """missing required other authority

    ``tx_missing_other_auth``: "Missing Authority" with ``{"auth", "sigs"}``
    (an authority no account holds, e.g. a balance_claim's key; the keys
    that signed)."""

    code = 4010003
    name = "tx_missing_other_auth"
    what = "missing required other authority"

    def __init__(self, authority: dict, keys) -> None:
        super().__init__("missing required other authority: Missing Authority")
        self.details = {"auth": authority, "sigs": sorted(keys)}


class CommitteeApproval(MissingAuthority):
    """committee account cannot directly approve transaction

    ``invalid_committee_approval``: an operation of a transaction (not of a
    proposal) needs the committee account's active authority."""

    code = 4010006
    name = "invalid_committee_approval"
    what = "committee account cannot directly approve transaction"

    def __init__(self) -> None:
        super().__init__("committee account cannot directly approve transaction: "
                         "Committee account may only propose transactions")


class InsufficientFee(ChainError):
    """The fee paid is below the fee schedule's fee for the operation
    (evaluator.cpp ``prepare_fee``: ``GRAPHENE_ASSERT( ..., insufficient_fee,
    "Insufficient Fee Paid", ...)``; protocol/exceptions.hpp, 4010007)."""

    name = "insufficient_fee"
    code = 4010007
    what = "insufficient fee"


class InsufficientBalance(FcAssertion):
    """The account does not hold enough of the asset (db_balance.cpp
    ``adjust_balance`` and the evaluators' balance checks: ``FC_ASSERT``)."""


class UnknownObject(FcAssertion):
    """An operation refers to an object that does not exist (graphene's
    ``id(db)``: the index's ``FC_ASSERT`` that the object exists)."""


class UnsupportedOperation(FcAssertion):
    """This node does not evaluate operations of this type (bitshares-core
    refuses account_transfer with an ``FC_ASSERT`` of ``apply_operation``:
    "No registered evaluator for operation ${op}")."""


class TransferNotAuthorized(InvalidOperation):
    """A transfer the asset's lists or its ``transfer_restricted`` flag
    refuse: graphene's transfer evaluate exceptions (chain/exceptions.hpp,
    ``GRAPHENE_ASSERT`` in transfer_evaluator.cpp), each with its code and
    name; the text is fc's ``to_string``: the exception's description, the
    refusal, then the evaluator's rethrown "Unable to transfer ${a} from
    ${f} to ${t}"."""

    #: (code, name, description) of graphene's three transfer refusals
    KINDS = {
        "from": (3050001, "transfer_from_account_not_whitelisted", "owner mismatch"),
        "to": (3050002, "transfer_to_account_not_whitelisted", "owner mismatch"),
        "restricted": (3050003, "transfer_restricted_transfer_asset",
                       "restricted transfer asset"),
    }

    def __init__(self, kind: str, text: str, unable: str, fc_format: str | None = None,
                 details: dict | None = None) -> None:
        self.code, self.name, self.what = self.KINDS[kind]
        super().__init__(f"{self.what}: {text} {unable}")
        # error.data.stack[0]: GRAPHENE_ASSERT's format and values
        self.fc_format = fc_format
        if details:
            self.details = details


#: ``(operation, exception) -> (sequence number, fc's description)`` of
#: bitshares-core's operation evaluate exceptions (chain/exceptions.cpp
#: ``GRAPHENE_IMPLEMENT_OP_EVALUATE_EXCEPTION``) that nodeapi's evaluators
#: raise; the transfer ones are :class:`TransferNotAuthorized`
OPERATION_EXCEPTIONS = {
    ("limit_order_create", "kill_unfilled"): (1, "Killing limit order due to unable to fill"),
    ("limit_order_create", "market_not_whitelisted"):
        (2, "The market has not been whitelisted by the selling asset"),
    ("limit_order_create", "market_blacklisted"):
        (3, "The market has been blacklisted by the selling asset"),
    ("limit_order_create", "selling_asset_unauthorized"):
        (4, "The account is not allowed to transact the selling asset"),
    ("limit_order_create", "receiving_asset_unauthorized"):
        (5, "The account is not allowed to transact the receiving asset"),
    ("limit_order_create", "insufficient_balance"): (6, "Insufficient balance"),
    ("limit_order_update", "nonexist_order"): (1, "Order does not exist"),
    ("limit_order_update", "owner_mismatch"): (2, "Order owned by someone else"),
    ("limit_order_cancel", "nonexist_order"): (1, "Order does not exist"),
    ("limit_order_cancel", "owner_mismatch"): (2, "Order owned by someone else"),
    ("proposal_create", "review_period_required"): (1, "review_period required"),
    ("proposal_create", "review_period_insufficient"): (2, "review_period insufficient"),
    ("liquidity_pool_exchange", "unfillable_price"):
        (1, "Unable to exchange at expected price"),
    ("balance_claim", "owner_mismatch"): (3, "owner mismatch"),
}

#: operation name -> type number (protocol/operations.hpp), for the codes
_OPERATION_TAGS = {"limit_order_create": 1, "limit_order_cancel": 2, "proposal_create": 22,
                   "balance_claim": 37,
                   "liquidity_pool_exchange": 63, "limit_order_update": 77}


class OperationRefused(InvalidOperation):
    """An evaluator's ``GRAPHENE_ASSERT( cond, <operation>_<exception>,
    format, values )``: fc's name ``<operation>_<exception>``, code
    ``3050000 + 100 * <operation's tag> + <sequence>`` and description
    (:data:`OPERATION_EXCEPTIONS`); text ``<description>: <format with its
    values>``, ``fc_format`` the format (``${name}`` placeholders) and
    ``details`` the values."""

    def __init__(self, operation: str, exception: str, format_: str,
                 details: dict | None = None) -> None:
        seq, self.what = OPERATION_EXCEPTIONS[(operation, exception)]
        self.name = f"{operation}_{exception}"
        self.code = 3050000 + 100 * _OPERATION_TAGS[operation] + seq
        text = format_
        for key, value in (details or {}).items():
            text = text.replace("${" + key + "}", str(value))
        super().__init__(f"{self.what}: {text}")
        self.fc_format = format_
        if details:
            self.details = details


class InsufficientFeeds(InvalidOperation):
    """A market-issued asset has no valid price feed for what the operation
    needs (graphene ``insufficient_feeds`` exception)."""

    name = "insufficient_feeds"
    code = 37006
    what = "insufficient feeds"


class InvalidBlock(ChainError):
    """A block from a peer fails validation (link, slot, witness, signature,
    merkle root)."""

    name = "invalid_block"


class UnlinkableBlock(InvalidBlock):
    """A block builds on no block this node knows (graphene
    ``unlinkable_block_exception``, fork_database.cpp ``_push_block``): its
    previous blocks must be fetched first."""

    name = "unlinkable_block"


class MerkleRootMismatch(InvalidBlock):
    """The block's ``transaction_merkle_root`` is not the merkle root of its
    processed transactions (signatures and operation_results included):
    graphene ``database::_apply_block`` asserts ``transaction_merkle_root ==
    calculate_merkle_root()`` before applying anything."""

    name = "merkle_root_mismatch"


class MalformedBlock(InvalidBlock):
    """A block is not a well-formed signed block: not an object, a missing
    field, or a field fc cannot serialize (bad time, id, hex, signature,
    transaction).  graphene fails such a block already when unpacking it.
    ``broadcast_block`` and the peers refuse such a block with it."""

    name = "malformed_block"


class BlockFromFuture(InvalidBlock):
    """The block's timestamp is :data:`nodeapi.chain.validation.FUTURE_BLOCK_TOLERANCE`
    seconds or more after the local wall clock (graphene application
    ``handle_block``: "Rejecting block with timestamp in the future")."""

    name = "block_from_future"


class BlockTooLarge(InvalidBlock):
    """The serialized block exceeds the ``maximum_block_size`` global
    parameter (graphene ``database::_apply_block``)."""

    name = "block_too_large"


class BlockExtensionsNotEmpty(InvalidBlock):
    """The block header carries extensions; this protocol version defines
    none (``future_extensions``), so they must be empty."""

    name = "block_extensions_not_empty"


def fc_assert(condition, expression: str, message: str = "", details: dict | None = None,
              fc_format: str | None = None) -> None:
    """graphene ``FC_ASSERT( expression, message )`` in an evaluator: raise
    :class:`InvalidOperation` with fc's text ``Assert Exception:
    <expression>: <message>`` when ``condition`` is false (fc's
    ``to_string``; without a message it ends in ``": "``, as a proposal's
    ``fail_reason`` shows it); ``details`` and ``fc_format`` as for
    :func:`assertion` (the values and the message's format)."""
    if not condition:
        raise assertion(InvalidOperation, expression, message, details, fc_format)
