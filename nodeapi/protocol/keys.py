"""Keys, addresses and signatures of graphene (secp256k1 through coincurve).

Forms (bitshares-core ``libraries/protocol/types.cpp``, ``address.cpp``,
``pts_address.cpp``; bitshares-fc ``elliptic_secp256k1.cpp``):

- public key: ``PREFIX + base58(33-byte compressed key + first 4 bytes of
  ripemd160(key))``, e.g. ``TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV``;
- private key (WIF): ``base58(0x80 + 32-byte secret + first 4 bytes of
  sha256(sha256(0x80 + secret)))``; like fc, a single-sha256 checksum is
  accepted too;
- address (genesis ``initial_balances`` owners, authorities'
  ``address_auths``): ``ripemd160(sha512(compressed key))``, written
  ``PREFIX + base58(20 bytes + first 4 bytes of ripemd160(20 bytes))``;
- PTS/BTC-style address of a key (``pts_address``): ``version byte +
  ripemd160(sha256(key)) + first 4 bytes of sha256d`` over the compressed or
  uncompressed key; as a graphene ``address`` it is the ripemd160 of those
  25 bytes.  Genesis balances may be owned by any of these forms
  (:func:`balance_addresses`).
- signatures: 65-byte compact recoverable, first byte ``27 + 4 + recid``;
  graphene accepts only canonical ones (:func:`is_canonical`).

:func:`public_key_bytes`, :func:`public_key_str` and :func:`address_bytes`
are pure functions memoized with a fixed bound (docs/DESIGN.rst "Memos of
pure functions": 10 us a key without, 0.15 us with).
"""

import functools
import hashlib

from coincurve import PrivateKey as _CCPrivateKey
from coincurve._libsecp256k1 import ffi, lib
from coincurve.context import GLOBAL_CONTEXT

from nodeapi.protocol.errors import (
    InvalidBase58, InvalidChecksum, InvalidKey, InvalidSignature, NonCanonicalSignature,
    WrongKeyPrefix)

B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(B58_ALPHABET)}
_RIPEMD160 = hashlib.new("ripemd160")
_CTX = GLOBAL_CONTEXT.ctx


def ripemd160(data: bytes) -> bytes:
    """RIPEMD-160 digest (20 bytes)."""
    h = _RIPEMD160.copy()
    h.update(data)
    return h.digest()


def sha256d(data: bytes) -> bytes:
    """sha256(sha256(data))."""
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def b58encode(data: bytes) -> str:
    """Bitcoin-alphabet base58 of ``data`` (leading zero bytes -> ``1``)."""
    n = int.from_bytes(data, "big")
    out = []
    while n:
        n, r = divmod(n, 58)
        out.append(B58_ALPHABET[r])
    pad = len(data) - len(data.lstrip(b"\0"))
    return "1" * pad + "".join(reversed(out))


def b58decode(text: str) -> bytes:
    """Inverse of :func:`b58encode`; raises :class:`InvalidBase58`."""
    n = 0
    try:
        for c in text:
            n = n * 58 + _B58_INDEX[c]
    except (KeyError, TypeError):
        raise InvalidBase58(f"Invalid base58 text {str(text)[:60]!r}") from None
    pad = len(text) - len(text.lstrip("1"))
    return b"\0" * pad + n.to_bytes((n.bit_length() + 7) // 8, "big")


def _check_prefix(text: str, prefix: str | None) -> tuple[str, str]:
    """Split ``text`` into (prefix, base58 payload); without ``prefix`` the
    prefix is the leading run of ASCII letters (the base58 text of a 33-byte
    key always starts with a digit)."""
    if not isinstance(text, str):
        raise InvalidKey(f"Invalid key {text!r}: expected a string")
    if prefix is None:
        n = 0
        while n < len(text) and text[n].isascii() and text[n].isalpha():
            n += 1
        prefix = text[:n]
    if not text.startswith(prefix) or len(text) == len(prefix):
        raise WrongKeyPrefix(f"{text[:60]!r} does not start with the prefix {prefix!r}")
    return prefix, text[len(prefix):]


@functools.lru_cache(maxsize=65536)
def public_key_bytes(text: str, prefix: str | None = None) -> bytes:
    """33-byte compressed key of a ``PREFIX...`` string (graphene
    ``public_key_type(string)``: prefix, base58, ripemd160 checksum; the
    point itself is not checked, like graphene, so the null key
    ``PREFIX1111111111111111111111111111111114T1Anm`` (33 zero bytes) passes).  ``prefix=None`` accepts
    any prefix.  Raises :class:`WrongKeyPrefix`, :class:`InvalidBase58`,
    :class:`InvalidChecksum`, :class:`InvalidKey`."""
    _, body = _check_prefix(text, prefix)
    raw = b58decode(body)
    if len(raw) != 37:
        raise InvalidKey(f"Invalid public key {text[:60]!r}: {len(raw)} bytes, expected 37")
    key, check = raw[:33], raw[33:]
    if ripemd160(key)[:4] != check:
        raise InvalidChecksum(f"Invalid public key {text[:60]!r}: checksum mismatch")
    return key


def checked_base58(data: bytes, prefix: str) -> str:
    """``prefix + base58(data + ripemd160(data)[:4])``: the text form of
    public keys and addresses (bitshares-core protocol/pts_address.cpp,
    address.cpp and types.cpp ``public_key_type`` conversions)."""
    return prefix + b58encode(data + ripemd160(data)[:4])


@functools.lru_cache(maxsize=65536)
def public_key_str(compressed: bytes, prefix: str) -> str:
    """``PREFIX + base58(key + ripemd160 checksum)`` of a 33-byte key."""
    return checked_base58(compressed, prefix)


def is_canonical(signature: bytes) -> bool:
    """graphene ``public_key::is_canonical`` of a 65-byte compact signature:
    r and s (bytes 1..32, 33..64) have the high bit clear and are not
    padded with a zero byte."""
    return (not signature[1] & 0x80 and not (signature[1] == 0 and not signature[2] & 0x80)
            and not signature[33] & 0x80
            and not (signature[33] == 0 and not signature[34] & 0x80))


class _BytesValue:
    """A value identified by its bytes ``raw``: equal to a value of the same
    class with the same bytes, hashed and ordered by them (graphene orders
    ``public_key_type`` and ``address`` by their bytes in
    ``flat_map``/``flat_set``).  Subclasses name the slot (an alias of the
    slot's descriptor, as fast as the slot itself)."""

    __slots__ = ("raw",)

    def __eq__(self, other) -> bool:
        return isinstance(other, type(self)) and other.raw == self.raw

    def __lt__(self, other) -> bool:
        return self.raw < other.raw

    def __hash__(self) -> int:
        return hash(self.raw)


class PublicKey(_BytesValue):
    """A secp256k1 public key in compressed form.

    :ivar compressed: the 33-byte compressed encoding.
    Equality, hashing and ordering use those bytes (:class:`_BytesValue`).
    """

    __slots__ = ()
    compressed = _BytesValue.raw

    def __init__(self, compressed: bytes) -> None:
        if len(compressed) != 33 or compressed[0] not in (2, 3):
            raise InvalidKey(f"Invalid public key bytes {bytes(compressed).hex()[:70]}")
        self.compressed = bytes(compressed)

    @classmethod
    def from_str(cls, text: str, prefix: str | None = None) -> "PublicKey":
        """Parse ``TEST6MRy...``; ``prefix`` (e.g. ``"TEST"``) is enforced
        when given.  Errors as :func:`public_key_bytes`."""
        return cls(public_key_bytes(text, prefix))

    @classmethod
    def from_bytes(cls, data: bytes) -> "PublicKey":
        """From 33 (compressed) or 65 (uncompressed) bytes, checked to be a
        point of the curve; raises :class:`InvalidKey`."""
        pub = ffi.new("secp256k1_pubkey *")
        if not lib.secp256k1_ec_pubkey_parse(_CTX, pub, data, len(data)):
            raise InvalidKey(f"Invalid public key bytes {bytes(data).hex()[:70]}")
        return cls(_serialize(pub, True))

    @classmethod
    def recover(cls, signature: bytes, digest: bytes, check_canonical: bool = True) -> "PublicKey":
        """The key that made the 65-byte compact ``signature`` of the 32-byte
        ``digest`` (graphene ``public_key(compact_signature, digest)``).
        Raises :class:`NonCanonicalSignature` (when ``check_canonical``) or
        :class:`InvalidSignature`."""
        if len(signature) != 65 or not 27 <= signature[0] <= 34:
            raise InvalidSignature(
                f"Invalid signature {bytes(signature).hex()[:20]}...: expected 65 bytes with "
                "a first byte of 27..34")
        if check_canonical and not is_canonical(signature):
            raise NonCanonicalSignature(
                f"Signature {bytes(signature).hex()[:20]}... is not canonical")
        sig = ffi.new("secp256k1_ecdsa_recoverable_signature *")
        pub = ffi.new("secp256k1_pubkey *")
        if not (lib.secp256k1_ecdsa_recoverable_signature_parse_compact(
                _CTX, sig, signature[1:], (signature[0] - 27) & 3)
                and lib.secp256k1_ecdsa_recover(_CTX, pub, sig, digest)):
            raise InvalidSignature(
                f"Signature {bytes(signature).hex()[:20]}... does not recover to a key")
        return cls(_serialize(pub, True))

    @property
    def uncompressed(self) -> bytes:
        """The 65-byte uncompressed encoding (``04 || x || y``)."""
        pub = ffi.new("secp256k1_pubkey *")
        if not lib.secp256k1_ec_pubkey_parse(_CTX, pub, self.compressed, 33):
            raise InvalidKey(f"Public key {self.compressed.hex()} is not a point of secp256k1")
        return _serialize(pub, False)

    def to_str(self, prefix: str) -> str:
        """``prefix + base58(key + checksum)``."""
        return public_key_str(self.compressed, prefix)

    def __repr__(self) -> str:
        return f"PublicKey({self.to_str('GPH')!r})"


def _serialize(pub, compressed: bool) -> bytes:
    n = 33 if compressed else 65
    out = ffi.new(f"unsigned char[{n}]")
    size = ffi.new("size_t *", n)
    lib.secp256k1_ec_pubkey_serialize(
        _CTX, out, size, pub, lib.SECP256K1_EC_COMPRESSED if compressed
        else lib.SECP256K1_EC_UNCOMPRESSED)
    return bytes(ffi.buffer(out, n))


@ffi.callback("int(unsigned char *, const unsigned char *, const unsigned char *, "
              "const unsigned char *, void *, unsigned int)")
def _graphene_nonce(nonce32, msg32, key32, algo16, data, attempt):
    """fc ``extended_nonce_function``: every call (retries inside
    libsecp256k1 and the canonical loop alike) moves a shared counter on and
    takes that RFC 6979 output."""
    counter = ffi.cast("unsigned int *", data)
    counter[0] += 1
    return lib.secp256k1_nonce_function_rfc6979(nonce32, msg32, key32, ffi.NULL, ffi.NULL,
                                                counter[0])


class PrivateKey:
    """A secp256k1 secret.

    :ivar secret: the 32-byte secret.
    """

    __slots__ = ("secret", "_cc", "_public")

    def __init__(self, secret: bytes) -> None:
        try:
            self._cc = _CCPrivateKey(bytes(secret))
        except (ValueError, TypeError):
            raise InvalidKey("Invalid private key: not a secret of secp256k1") from None
        self.secret = bytes(secret)
        self._public = None

    @classmethod
    def from_wif(cls, wif: str) -> "PrivateKey":
        """Parse a WIF string (``5K...``); raises :class:`InvalidBase58`,
        :class:`InvalidChecksum` or :class:`InvalidKey`."""
        if not isinstance(wif, str):
            raise InvalidKey("Invalid WIF private key: expected a string")
        raw = b58decode(wif)
        if len(raw) != 37 or raw[0] != 0x80:
            raise InvalidKey("Invalid WIF private key: expected 0x80 + 32 bytes + checksum")
        body, check = raw[:33], raw[33:]
        first = hashlib.sha256(body).digest()
        if check not in (hashlib.sha256(first).digest()[:4], first[:4]):
            raise InvalidChecksum("Invalid WIF private key: checksum mismatch")
        return cls(body[1:])

    @classmethod
    def from_seed(cls, seed: str) -> "PrivateKey":
        """graphene ``private_key::regenerate(sha256(seed))`` (brain keys,
        ``get_dev_key``-style ``nathan`` keys)."""
        return cls(hashlib.sha256(seed.encode()).digest())

    def to_wif(self) -> str:
        """WIF form with the double-sha256 checksum."""
        body = b"\x80" + self.secret
        return b58encode(body + sha256d(body)[:4])

    @property
    def public_key(self) -> PublicKey:
        """The matching :class:`PublicKey`."""
        if self._public is None:
            self._public = PublicKey(self._cc.public_key.format(compressed=True))
        return self._public

    def sign_digest(self, digest: bytes) -> bytes:
        """65-byte canonical compact signature of a 32-byte digest (fc
        ``private_key::sign_compact(digest, require_canonical=true)``):
        deterministic RFC 6979 nonces from a counter that starts at 1 and
        grows until the signature is canonical; first byte ``31 + recid``."""
        if len(digest) != 32:
            raise InvalidSignature(f"Cannot sign {len(digest)} bytes: expected a 32-byte digest")
        counter = ffi.new("unsigned int *", 0)
        while True:
            sig = self._cc.sign_recoverable(digest, hasher=None,
                                            custom_nonce=(_graphene_nonce, counter))
            out = bytes([31 + sig[64]]) + sig[:64]
            if is_canonical(out):
                return out

    def __eq__(self, other) -> bool:
        return isinstance(other, PrivateKey) and other.secret == self.secret

    def __hash__(self) -> int:
        return hash(self.secret)

    def __repr__(self) -> str:
        return f"PrivateKey(<secret of {self.public_key.to_str('GPH')}>)"


class Address(_BytesValue):
    """A graphene ``address``: 20 bytes, usually ripemd160(sha512(key)).

    :ivar data: the 20 bytes (equality, hashing and ordering:
        :class:`_BytesValue`).
    """

    __slots__ = ()
    data = _BytesValue.raw

    def __init__(self, data: bytes) -> None:
        if len(data) != 20:
            raise InvalidKey(f"Invalid address bytes {bytes(data).hex()}: expected 20 bytes")
        self.data = bytes(data)

    @classmethod
    def from_public_key(cls, key: PublicKey) -> "Address":
        """graphene ``address(public_key)``: ripemd160(sha512(compressed))."""
        return cls(ripemd160(hashlib.sha512(key.compressed).digest()))

    @classmethod
    def from_pts(cls, key: PublicKey, compressed: bool, version: int) -> "Address":
        """graphene ``address(pts_address(key, compressed, version))``:
        ripemd160 of the 25-byte PTS/BTC address (version 56 = PTS, 0 = BTC)."""
        return cls(ripemd160(pts_address(key, compressed, version)))

    @classmethod
    def from_str(cls, text: str, prefix: str) -> "Address":
        """Parse ``PREFIX...`` (e.g. ``TEST7CwdioNL9my53mj31UYGdcPxhxHfPTBvx``).
        Raises :class:`WrongKeyPrefix`, :class:`InvalidBase58`,
        :class:`InvalidChecksum` or :class:`InvalidKey`."""
        return cls(address_bytes(text, prefix))

    def to_str(self, prefix: str) -> str:
        """``prefix + base58(20 bytes + ripemd160 checksum)``."""
        return checked_base58(self.data, prefix)

    def __repr__(self) -> str:
        return f"Address({self.to_str('GPH')!r})"


@functools.lru_cache(maxsize=4096)
def address_bytes(text: str, prefix: str | None) -> bytes:
    """20 address bytes of ``PREFIX...``.  With ``prefix=None`` the prefix
    is the shortest leading run of letters after which the rest decodes with
    a valid checksum.  Errors as :meth:`Address.from_str`."""
    if prefix is None:
        if not isinstance(text, str):
            raise InvalidKey(f"Invalid address {text!r}: expected a string")
        for i in range(1, min(len(text), 12)):
            if not text[i - 1].isalpha():
                break
            try:
                return address_bytes(text, text[:i])
            except (InvalidBase58, InvalidChecksum, InvalidKey):
                continue
        raise InvalidKey(f"Invalid address {text[:60]!r}: no prefix gives a valid address")
    _, body = _check_prefix(text, prefix)
    raw = b58decode(body)
    if len(raw) != 24:
        raise InvalidKey(f"Invalid address {text[:60]!r}: {len(raw)} bytes, expected 24")
    if ripemd160(raw[:20])[:4] != raw[20:]:
        raise InvalidChecksum(f"Invalid address {text[:60]!r}: checksum mismatch")
    return raw[:20]


def pts_address(key: PublicKey, compressed: bool = True, version: int = 56) -> bytes:
    """The 25-byte ``pts_address``: version + ripemd160(sha256(key bytes)) +
    first 4 bytes of sha256d of those 21 bytes."""
    data = key.compressed if compressed else key.uncompressed
    body = bytes([version]) + ripemd160(hashlib.sha256(data).digest())
    return body + sha256d(body)[:4]


def balance_addresses(key: PublicKey) -> set:
    """The five addresses a key can own a genesis balance under (graphene
    ``balance_claim_evaluator`` and ``sign_state::signed_by(address)``):
    ``address(key)`` and the PTS/BTC forms, compressed or not."""
    out = {Address.from_public_key(key)}
    for compressed in (False, True):
        for version in (56, 0):
            out.add(Address.from_pts(key, compressed, version))
    return out
