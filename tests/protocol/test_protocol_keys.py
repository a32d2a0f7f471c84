"""nodeapi.protocol ids, times, base58 keys, WIF, addresses and compact
signatures, checked against python-bitshares' graphenebase and the real
genesis / mainnet data."""

import hashlib

import pytest
from graphenebase.account import Address as GAddress
from graphenebase.account import GrapheneAddress
from graphenebase.account import PrivateKey as GPrivateKey
from graphenebase.account import PublicKey as GPublicKey

from nodeapi.errors import ProtocolError
from nodeapi.protocol import errors
from nodeapi.protocol.ids import ObjectId, instance_of
from nodeapi.protocol.keys import (
    Address, PrivateKey, PublicKey, b58decode, b58encode, balance_addresses, is_canonical)
from nodeapi.protocol.times import format_time, parse_time

from kit.keys import DEV_PUB, DEV_WIF


GENESIS_OWNER = "TEST7CwdioNL9my53mj31UYGdcPxhxHfPTBvx"
MAINNET_WITNESS_KEY = "BTS6ZQEFsPmG6jWspNDdZHkehNmPpG7gkSHkphmRZQWaJ2LrcaVSi"


def test_object_id_parse_format_order():
    oid = ObjectId.parse("1.2.17")
    assert (oid.space, oid.type, oid.instance) == (1, 2, 17)
    assert str(oid) == "1.2.17"
    assert ObjectId.parse("2.9.0") == ObjectId(2, 9, 0)
    ids = [ObjectId.parse(s) for s in ("1.11.42", "1.2.100", "1.2.9", "2.9.0", "1.2.17")]
    assert [str(i) for i in sorted(ids)] == ["1.2.9", "1.2.17", "1.2.100", "1.11.42", "2.9.0"]
    assert ObjectId.from_int(oid.to_int()) == oid
    assert oid.to_int() == (1 << 56) | (2 << 48) | 17
    assert instance_of("1.3.121", 1, 3) == 121
    assert len({ObjectId.parse("1.2.17"), ObjectId(1, 2, 17)}) == 1


@pytest.mark.parametrize("bad", ["", "1.2", "1.2.3.4", "1.2.x", "1..2", "a.b.c", "1.2.-1",
                                 "1.2. 3", "256.1.1", "1.256.0", "1.2." + str(1 << 48),
                                 "1.2.+3", 17, None, "1.2.١"])
def test_object_id_invalid(bad):
    with pytest.raises(errors.InvalidObjectId) as info:
        ObjectId.parse(bad)
    assert isinstance(info.value, ProtocolError)
    assert "object id" in str(info.value)


def test_instance_of_wrong_type():
    with pytest.raises(errors.InvalidObjectId, match="1.2.x"):
        instance_of("1.3.0", 1, 2)


def test_times_round_trip():
    assert parse_time("1970-01-01T00:00:00") == 0
    assert parse_time("2015-10-13T14:12:24") == 1444745544
    assert format_time(1444745544) == "2015-10-13T14:12:24"
    assert parse_time("2106-02-07T06:28:15") == 0xFFFFFFFF
    assert format_time(0xFFFFFFFF) == "2106-02-07T06:28:15"
    assert parse_time("2015-10-13T14:12:24Z") == 1444745544
    assert parse_time("2015-10-13T14:12:24.000") == 1444745544
    for t in (0, 86399, 951782400, 1709251199, 4102444800):
        assert parse_time(format_time(t)) == t


@pytest.mark.parametrize("bad", ["2015-10-13 14:12:24", "2015-13-01T00:00:00",
                                 "2015-02-30T00:00:00", "2015-10-13T24:00:00",
                                 "2015-10-13T14:12", "2015-1-13T14:12:245", "+015-10-13T14:12:24",
                                 "2015-10-13T 4:12:24", 1444745544, None])
def test_times_invalid(bad):
    with pytest.raises(errors.InvalidTime):
        parse_time(bad)


def test_base58():
    for data in (b"", b"\0", b"\0\0\x01", bytes(range(40)), b"\xff" * 33):
        assert b58decode(b58encode(data)) == data
    assert b58encode(b"\0\0\x01") == "112"
    with pytest.raises(errors.InvalidBase58):
        b58decode("0OIl")


def test_public_key_matches_graphenebase():
    pub = PublicKey.from_str(DEV_PUB, "TEST")
    assert pub.to_str("TEST") == DEV_PUB
    assert pub.to_str("BTS") == format(GPublicKey(DEV_PUB, prefix="TEST"), "BTS")
    assert pub.compressed == bytes(GPublicKey(DEV_PUB, prefix="TEST"))
    assert PublicKey.from_str(DEV_PUB) == pub  # any prefix
    assert PublicKey.from_bytes(pub.uncompressed) == pub
    assert PublicKey.from_str(MAINNET_WITNESS_KEY, "BTS").to_str("BTS") == MAINNET_WITNESS_KEY


def test_public_key_errors():
    with pytest.raises(errors.WrongKeyPrefix):
        PublicKey.from_str(DEV_PUB, "BTS")
    flipped = DEV_PUB[:-1] + ("V" if DEV_PUB[-1] != "V" else "W")
    with pytest.raises(errors.InvalidChecksum):
        PublicKey.from_str(flipped, "TEST")
    with pytest.raises(errors.InvalidBase58):
        PublicKey.from_str("TEST" + "0" * 50, "TEST")
    with pytest.raises(errors.InvalidKey):
        PublicKey.from_str("TEST" + "1" * 50, "TEST")
    with pytest.raises(errors.InvalidKey):
        PublicKey.from_bytes(b"\x02" + b"\xff" * 32)


def test_private_key_wif():
    key = PrivateKey.from_wif(DEV_WIF)
    assert key.to_wif() == DEV_WIF
    assert key.secret == bytes(GPrivateKey(DEV_WIF))
    assert key.public_key.to_str("TEST") == DEV_PUB
    other = PrivateKey.from_seed("nathan")
    assert other.public_key.to_str("BTS") == format(
        GPrivateKey(other.to_wif()).pubkey, "BTS")
    bad = DEV_WIF[:-1] + ("3" if DEV_WIF[-1] != "3" else "4")
    with pytest.raises(errors.InvalidChecksum):
        PrivateKey.from_wif(bad)
    with pytest.raises(errors.InvalidKey):
        PrivateKey.from_wif(b58encode(b"\x81" + b"\x01" * 36))
    with pytest.raises(errors.InvalidKey):
        PrivateKey(b"\0" * 32)


def test_addresses_match_graphenebase_and_genesis():
    pub = PublicKey.from_str(DEV_PUB, "TEST")
    plain = Address.from_public_key(pub)
    assert plain.to_str("TEST") == str(GrapheneAddress.from_pubkey(DEV_PUB, prefix="TEST"))
    expected = {plain.to_str("TEST")}
    for compressed in (True, False):
        for version in (56, 0):
            expected.add(str(GAddress.from_pubkey(DEV_PUB, compressed=compressed,
                                                  version=version, prefix="TEST")))
    got = {a.to_str("TEST") for a in balance_addresses(pub)}
    assert got == expected and len(got) == 5
    # the bundled genesis' balance owner is the dev key's compressed PTS address
    assert GENESIS_OWNER in got
    assert Address.from_str(GENESIS_OWNER, "TEST") == Address.from_pts(pub, True, 56)
    assert Address.from_str(GENESIS_OWNER, "TEST").to_str("TEST") == GENESIS_OWNER
    with pytest.raises(errors.WrongKeyPrefix):
        Address.from_str(GENESIS_OWNER, "BTS")
    with pytest.raises(errors.InvalidChecksum):
        Address.from_str(GENESIS_OWNER[:-1] + "w", "TEST")


def test_sign_recover_canonical():
    key = PrivateKey.from_wif(DEV_WIF)
    for i in range(40):
        digest = hashlib.sha256(b"msg %d" % i).digest()
        sig = key.sign_digest(digest)
        assert len(sig) == 65 and 31 <= sig[0] <= 34 and is_canonical(sig)
        assert key.sign_digest(digest) == sig  # deterministic
        assert PublicKey.recover(sig, digest) == key.public_key
        other = PublicKey.recover(sig, hashlib.sha256(b"other").digest())
        assert other != key.public_key


def test_recover_errors():
    key = PrivateKey.from_wif(DEV_WIF)
    digest = hashlib.sha256(b"x").digest()
    sig = key.sign_digest(digest)
    with pytest.raises(errors.InvalidSignature):
        PublicKey.recover(sig[:64], digest)
    with pytest.raises(errors.InvalidSignature):
        PublicKey.recover(bytes([26]) + sig[1:], digest)
    high = sig[:1] + bytes([sig[1] | 0x80]) + sig[2:]
    with pytest.raises(errors.NonCanonicalSignature):
        PublicKey.recover(high, digest)
    padded = sig[:33] + b"\0\x01" + sig[35:]
    assert not is_canonical(padded)
    with pytest.raises(errors.InvalidSignature):
        PublicKey.recover(sig[:1] + b"\0" * 64, digest, check_canonical=False)
