"""The crypto API set (``crypto`` / ``crypto_api``): helpers for
confidential (blinded) transfers.

Graphene reference: bitshares-core libraries/app/api.cpp ``crypto_api``
over fc::ecc (libraries/fc/src/crypto/elliptic_impl_priv.cpp and
elliptic_secp256k1.cpp, on libsecp256k1-zkp).  ``blind_sum`` is scalar
arithmetic modulo the secp256k1 group order and is answered here.  The
other functions need Pedersen commitments with libsecp256k1-zkp's second
generator and its Borromean range proofs: no maintained Python binding of
that library exists (PyPI ``secp256k1-zkp`` 0.14.3, last released in 2019,
wraps the Mimblewimble fork, whose commitments and proofs differ), so they
check their arguments like graphene and then fail with
:class:`CryptoUnsupported` naming the missing capability (README, "What is
not supported").
"""

from nodeapi.api.arguments import require_hex, require_list
from nodeapi.api.base import ApiSet, api_function, fc_int
from nodeapi.errors import ApiError

#: secp256k1 group order.
ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_U64 = (1 << 64) - 1


class CryptoUnsupported(ApiError):
    """A crypto_api function this node cannot compute (module text)."""

    def __init__(self, function: str) -> None:
        super().__init__(
            f"crypto_api.{function} needs Pedersen commitments and range proofs of "
            "libsecp256k1-zkp, which this node does not have (no maintained Python binding "
            "exists)")


def _blind(value, what: str) -> int:
    """A ``blind_factor_type`` (sha256, 64 hex digits) as an int."""
    return int.from_bytes(require_hex(value, 32, what), "big")


def _commitment(value, what: str) -> bytes:
    """A ``commitment_type`` (33 bytes, 66 hex digits)."""
    return require_hex(value, 33, what)


def _proof(value, what: str = "proof") -> bytes:
    """A ``vector<char>`` proof as hex."""
    if not isinstance(value, str) or len(value) % 2:
        raise ApiError(f"{what}: expected hex bytes, got {value!r}")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ApiError(f"{what}: expected hex bytes, got {value!r}") from None


def _int(value, what: str, low: int, high: int) -> int:
    value = fc_int(value, what)
    if not low <= value <= high:
        raise ApiError(f"{what}: expected an integer {low}..{high}, got {value!r}")
    return value


class CryptoApi(ApiSet):
    """graphene ``crypto_api`` (module text)."""

    name = "crypto"

    @api_function
    def blind_sum(self, blinds_in, non_neg):
        """The blinding factor (64 hex digits) that is the sum of the first
        ``non_neg`` of ``blinds_in`` minus the others, modulo the group
        order (``secp256k1_pedersen_blind_sum``).

        :raises ApiError: malformed factors, ``non_neg`` above their count,
            or a factor not below the group order."""
        blinds = [_blind(b, f"blinds_in[{i}]") for i, b in enumerate(require_list(blinds_in, "blinds_in"))]
        non_neg = _int(non_neg, "non_neg", 0, (1 << 32) - 1)
        if non_neg > len(blinds):
            raise ApiError(f"non_neg {non_neg} is more than the {len(blinds)} blinding factors")
        if any(b >= ORDER for b in blinds):
            raise ApiError("a blinding factor is not below the secp256k1 group order")
        total = (sum(blinds[:non_neg]) - sum(blinds[non_neg:])) % ORDER
        return total.to_bytes(32, "big").hex()

    @api_function
    def blind(self, blind, value):
        """Pedersen commitment of ``value`` with factor ``blind``."""
        _blind(blind, "blind")
        _int(value, "value", 0, _U64)
        raise CryptoUnsupported("blind")

    @api_function
    def verify_sum(self, commits_in, neg_commits_in, excess):
        """Whether the commitments minus the negative ones equal ``excess``."""
        for name, commits in (("commits_in", commits_in), ("neg_commits_in", neg_commits_in)):
            for i, c in enumerate(require_list(commits, name)):
                _commitment(c, f"{name}[{i}]")
        _int(excess, "excess", -(1 << 63), (1 << 63) - 1)
        raise CryptoUnsupported("verify_sum")

    @api_function
    def verify_range(self, commit, proof):
        """``{success, min_val, max_val}`` of a range proof."""
        _commitment(commit, "commit")
        _proof(proof)
        raise CryptoUnsupported("verify_range")

    @api_function
    def range_proof_sign(self, min_value, commit, commit_blind, nonce, base10_exp, min_bits,
                         actual_value):
        """A range proof of ``actual_value`` in ``commit``."""
        _int(min_value, "min_value", 0, _U64)
        _commitment(commit, "commit")
        _blind(commit_blind, "commit_blind")
        _blind(nonce, "nonce")
        _int(base10_exp, "base10_exp", -128, 127)
        _int(min_bits, "min_bits", 0, 255)
        _int(actual_value, "actual_value", 0, _U64)
        raise CryptoUnsupported("range_proof_sign")

    @api_function
    def verify_range_proof_rewind(self, nonce, commit, proof):
        """The value, blinding factor and message a range proof carries."""
        _blind(nonce, "nonce")
        _commitment(commit, "commit")
        _proof(proof)
        raise CryptoUnsupported("verify_range_proof_rewind")

    @api_function
    def range_get_info(self, proof):
        """``{exp, mantissa, min_value, max_value}`` of a range proof."""
        _proof(proof)
        raise CryptoUnsupported("range_get_info")
