"""Amounts as values (protocol/asset.py): ``asset``/``core``/``amount_of``
and graphene's ``asset::multiply_and_round_up``, one implementation for the
fee conversion and the take-profit fee.

Reference: bitshares-core libraries/protocol/asset.cpp
``asset::multiply_and_round_up`` and ``operator <`` of prices."""

import pytest

from nodeapi.protocol.asset import (
    amount_of, asset, core, make_price, multiply_and_round_up, ratio_less)
from nodeapi.protocol.errors import InvalidField


def test_amount_values_keep_the_wire_form():
    assert asset(12, "1.3.5") == {"amount": 12, "asset_id": "1.3.5"}
    assert core(7) == {"amount": 7, "asset_id": "1.3.0"}
    assert amount_of({"amount": "9007199254740993", "asset_id": "1.3.0"}) == 9007199254740993


def test_multiply_and_round_up_by_hand():
    # 3 GOLD (1.3.1) per 2 core: 5 core -> ceil(5 * 3 / 2) = 8 GOLD
    cer = make_price(2, "1.3.0", 3, "1.3.1")
    assert multiply_and_round_up(core(5), cer) == {"amount": 8, "asset_id": "1.3.1"}
    # the other way round: 8 GOLD -> ceil(8 * 2 / 3) = 6 core
    assert multiply_and_round_up(asset(8, "1.3.1"), cer) == core(6)
    # exact products are not rounded: 4 core -> 6 GOLD
    assert multiply_and_round_up(core(4), cer) == asset(6, "1.3.1")
    with pytest.raises(InvalidField, match="1.3.2 is not in the price"):
        multiply_and_round_up(asset(1, "1.3.2"), cer)
    with pytest.raises(InvalidField, match="zero amount"):
        multiply_and_round_up(core(1), make_price(0, "1.3.0", 3, "1.3.1"))


def test_ratio_less_cross_multiplies():
    assert ratio_less(1, 3, 1, 2)      # 1/3 < 1/2
    assert not ratio_less(2, 4, 1, 2)  # equal prices
    assert not ratio_less(3, 2, 1, 1)
