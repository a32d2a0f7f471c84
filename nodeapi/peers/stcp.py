"""The secure stream of graphene's peer protocol: key agreement and the
AES stream cipher, as bitshares-core ``libraries/net/stcp_socket.cpp`` does
them with bitshares-fc's primitives.

- Each side sends a fresh secp256k1 public key (33 bytes, compressed) and
  reads the other's; the shared secret is fc ``private_key::get_shared_secret``
  (``src/crypto/elliptic_secp256k1.cpp``): the other key multiplied by our
  secret, and SHA-512 of the x coordinate (the 32 bytes after the
  compressed key's prefix byte): 64 bytes.
- Both directions use AES-256-CBC without padding, one continuous CBC
  stream per direction (fc ``aes_encoder``/``aes_decoder``,
  ``src/crypto/aes.cpp``, with ``EVP_CIPHER_CTX_set_padding(0)``); the key is
  SHA-256 of the shared secret and the IV fc ``city_hash_crc_128`` of the
  shared secret (``src/crypto/city.cpp``), laid out as two little-endian
  64-bit words, high word first.  Data is always a multiple of 16 bytes.
"""

import hashlib
import struct

import coincurve
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

#: bytes of a compressed secp256k1 public key (fc ``public_key_data``)
PUBLIC_KEY_SIZE = 33
#: bytes of the AES block: every encrypted write and read is a multiple
BLOCK_SIZE = 16

_MASK = (1 << 64) - 1
# CityHash's primes (fc src/crypto/city.cpp k0, k1)
_K0 = 0xc3a5c85c97cb3127
_K1 = 0xb492b66fbe98f273
_KMUL = 0x9ddfea08eb382d69


def _fetch64(data: bytes, pos: int) -> int:
    return struct.unpack_from("<Q", data, pos)[0]


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int) -> int:
    """fc ``HashLen16(u, v)`` = ``Hash128to64(uint128(hi=u, lo=v))``."""
    a = ((v ^ u) * _KMUL) & _MASK
    a ^= a >> 47
    b = ((u ^ a) * _KMUL) & _MASK
    b ^= b >> 47
    return (b * _KMUL) & _MASK


def _city_murmur(data: bytes, seed_hi: int, seed_lo: int) -> tuple:
    """fc ``CityMurmur`` for ``len(data) > 16``: ``(hi, lo)``."""
    length = len(data)
    a, b = seed_lo, seed_hi
    c = _hash_len16((_fetch64(data, length - 8) + _K1) & _MASK, a)
    d = _hash_len16((b + length) & _MASK, (c + _fetch64(data, length - 16)) & _MASK)
    a = (a + d) & _MASK
    remaining = length - 16
    pos = 0
    while True:
        a ^= (_shift_mix((_fetch64(data, pos) * _K1) & _MASK) * _K1) & _MASK
        a = (a * _K1) & _MASK
        b ^= a
        c ^= (_shift_mix((_fetch64(data, pos + 8) * _K1) & _MASK) * _K1) & _MASK
        c = (c * _K1) & _MASK
        d ^= c
        pos += 16
        remaining -= 16
        if remaining <= 0:
            break
    a = _hash_len16(a, c)
    b = _hash_len16(d, b)
    return a ^ b, _hash_len16(b, a)


def city_hash_crc_128(data: bytes) -> tuple:
    """fc ``city_hash_crc_128`` of ``data`` as ``(hi, lo)`` 64-bit words,
    for the lengths the peer protocol hashes: 33 to 143 bytes (the shared
    secret is 64).  Up to 900 bytes fc computes ``city_hash128``: a seed of
    the first 16 bytes (``hi`` = bytes 0-7, ``lo`` = bytes 8-15 + k0, both
    little-endian) and ``CityMurmur`` of the rest (fewer than 128 bytes, so
    the long loop of ``CityHash128WithSeed`` is not used).

    :raises ValueError: for another length."""
    if not 32 < len(data) < 144:
        raise ValueError(f"city_hash_crc_128 is implemented for 33..143 bytes, "
                         f"got {len(data)}")
    seed_hi = _fetch64(data, 0)
    seed_lo = (_fetch64(data, 8) + _K0) & _MASK
    return _city_murmur(data[16:], seed_hi, seed_lo)


def new_private_key() -> coincurve.PrivateKey:
    """A fresh secp256k1 key for one connection's key agreement."""
    return coincurve.PrivateKey()


def shared_secret(private_key: coincurve.PrivateKey, remote_public: bytes) -> bytes:
    """fc ``get_shared_secret``: SHA-512 (64 bytes) of the x coordinate of
    ``remote_public`` (33 bytes, compressed) times ``private_key``.

    :raises ValueError: when ``remote_public`` is not a valid point."""
    if len(remote_public) != PUBLIC_KEY_SIZE:
        raise ValueError(f"a public key is {PUBLIC_KEY_SIZE} bytes, got {len(remote_public)}")
    point = coincurve.PublicKey(remote_public).multiply(private_key.secret)
    return hashlib.sha512(point.format(compressed=True)[1:]).digest()


def stream_key_iv(secret: bytes) -> tuple:
    """``(key, iv)`` of both directions' AES-256-CBC: SHA-256 of the shared
    secret, and :func:`city_hash_crc_128` of it as the little-endian high
    word then the little-endian low word (fc ``aes_encoder::init``)."""
    hi, lo = city_hash_crc_128(secret)
    return hashlib.sha256(secret).digest(), struct.pack("<QQ", hi, lo)


class StreamCipher:
    """One connection's two CBC streams (see the module docstring).

    :param secret: the 64-byte shared secret.

    :meth:`encrypt` and :meth:`decrypt` take and give multiples of
    :data:`BLOCK_SIZE` bytes; each call continues its stream."""

    def __init__(self, secret: bytes) -> None:
        key, iv = stream_key_iv(secret)
        self._encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        self._decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()

    def encrypt(self, plain: bytes) -> bytes:
        """The next ciphertext of the outgoing stream.

        :raises ValueError: when ``plain`` is not a multiple of 16 bytes."""
        if len(plain) % BLOCK_SIZE:
            raise ValueError(f"plaintext must be a multiple of {BLOCK_SIZE} bytes")
        return self._encryptor.update(plain)

    def decrypt(self, data: bytes) -> bytes:
        """The next plaintext of the incoming stream.

        :raises ValueError: when ``data`` is not a multiple of 16 bytes."""
        if len(data) % BLOCK_SIZE:
            raise ValueError(f"ciphertext must be a multiple of {BLOCK_SIZE} bytes")
        return self._decryptor.update(data)
