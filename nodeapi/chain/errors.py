"""Errors of the chain core: one :class:`~nodeapi.errors.ChainError` subclass
per validation rule, so clients and tests can tell them apart.

Graphene reference: the ``FC_ASSERT``/``GRAPHENE_ASSERT`` checks of
``database::_apply_transaction``, ``verify_authority`` and the evaluators
(libraries/chain/*.cpp).  When one of these is raised nothing was applied.
"""

from nodeapi.errors import ChainError
from nodeapi.protocol.errors import InvalidSignature  # noqa: F401  (the one class)


class TransactionTooLarge(ChainError):
    """The serialized transaction exceeds maximum_transaction_size."""

    name = "transaction_too_large"


class EmptyTransaction(ChainError):
    """The transaction has no operations (graphene ``transaction::validate``:
    ``FC_ASSERT( operations.size() > 0, "A transaction must have at least one
    operation" )``)."""

    name = "empty_transaction"


class TransactionExpired(ChainError):
    """The transaction's expiration is not after the head block time."""

    name = "transaction_expired"


class ExpirationTooFar(ChainError):
    """The expiration is later than head time + maximum_time_until_expiration."""

    name = "expiration_too_far"


class BadTaposReference(ChainError):
    """ref_block_num / ref_block_prefix do not match a block of this chain."""

    name = "tapos_mismatch"


class DuplicateTransaction(ChainError):
    """A transaction with this id is already pending or in a recent block."""

    name = "duplicate_transaction"


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

    def __init__(self, authority: dict, keys) -> None:
        super().__init__("missing required other authority: Missing Authority")
        self.details = {"auth": authority, "sigs": sorted(keys)}


class CommitteeApproval(MissingAuthority):
    """committee account cannot directly approve transaction

    ``invalid_committee_approval``: an operation of a transaction (not of a
    proposal) needs the committee account's active authority."""

    code = 4010006
    name = "invalid_committee_approval"

    def __init__(self) -> None:
        super().__init__("committee account cannot directly approve transaction: "
                         "Committee account may only propose transactions")


class InsufficientFee(ChainError):
    """The fee paid is below the fee schedule's fee for the operation."""

    name = "insufficient_fee"


class InsufficientBalance(ChainError):
    """The account does not hold enough of the asset."""

    name = "insufficient_balance"


class UnknownObject(ChainError):
    """An operation refers to an object that does not exist."""

    name = "unknown_object"


class UnsupportedOperation(ChainError):
    """This node does not evaluate operations of this type."""

    name = "unsupported_operation"


class InvalidOperation(ChainError):
    """An operation breaks a rule of its evaluator (graphene do_evaluate)."""

    name = "invalid_operation"


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

    def __init__(self, kind: str, text: str, unable: str) -> None:
        self.code, self.name, what = self.KINDS[kind]
        super().__init__(f"{what}: {text} {unable}")


class OrderNotAuthorized(InvalidOperation):
    """A limit order the selling asset's market lists or either asset's
    account lists refuse: graphene's limit_order_create evaluate exceptions
    (chain/exceptions.hpp, ``GRAPHENE_ASSERT`` in market_evaluator.cpp
    ``limit_order_create_evaluator::do_evaluate``), each with its code
    (3050100 + its number) and name; the text is the exception's
    description, then the evaluator's."""

    #: (code, name, description) of graphene's four list refusals
    KINDS = {
        "market_not_whitelisted": (3050102, "limit_order_create_market_not_whitelisted",
                                   "The market has not been whitelisted by the selling asset"),
        "market_blacklisted": (3050103, "limit_order_create_market_blacklisted",
                               "The market has been blacklisted by the selling asset"),
        "selling_asset_unauthorized": (
            3050104, "limit_order_create_selling_asset_unauthorized",
            "The account is not allowed to transact the selling asset"),
        "receiving_asset_unauthorized": (
            3050105, "limit_order_create_receiving_asset_unauthorized",
            "The account is not allowed to transact the receiving asset"),
    }

    def __init__(self, kind: str, text: str) -> None:
        self.code, self.name, what = self.KINDS[kind]
        super().__init__(f"{what}: {text}")


class ReviewPeriodRequired(InvalidOperation):
    """A proposal needing the committee's approval names no review period
    (graphene ``proposal_create_review_period_required``, 3052201,
    "review_period required": proposal_evaluator.cpp ``GRAPHENE_ASSERT``)."""

    code = 3052201
    name = "proposal_create_review_period_required"

    def __init__(self, minimum: int) -> None:
        super().__init__(f"review_period required: Review period not given, but at least "
                         f"{minimum} required")


class ReviewPeriodInsufficient(InvalidOperation):
    """A proposal needing the committee's approval names a review period
    below ``committee_proposal_review_period`` (graphene
    ``proposal_create_review_period_insufficient``, 3052202, "review_period
    insufficient")."""

    code = 3052202
    name = "proposal_create_review_period_insufficient"

    def __init__(self, given: int, minimum: int) -> None:
        super().__init__(f"review_period insufficient: Review period of {given} specified, "
                         f"but at least {minimum} required")


class InsufficientFeeds(InvalidOperation):
    """A market-issued asset has no valid price feed for what the operation
    needs (graphene ``insufficient_feeds`` exception)."""

    name = "insufficient_feeds"


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


def fc_assert(condition, expression: str, message: str = "") -> None:
    """graphene ``FC_ASSERT( expression, message )`` in an evaluator: raise
    :class:`InvalidOperation` with fc's text ``Assert Exception:
    <expression>: <message>`` when ``condition`` is false (fc's
    ``to_string``; without a message it ends in ``": "``, as a proposal's
    ``fail_reason`` shows it)."""
    if not condition:
        raise InvalidOperation(f"Assert Exception: {expression}: {message}")
