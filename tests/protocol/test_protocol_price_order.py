"""Price order: :func:`nodeapi.protocol.asset.value_key` sorts prices as
their exact values (graphene compares prices of one market by
cross-multiplying: price.cpp ``operator<``), floats first, Fractions only
where the floats are equal."""

import random
from fractions import Fraction

from nodeapi.protocol.asset import value, value_key


def price(base: int, quote: int) -> dict:
    return {"base": {"amount": base, "asset_id": "1.3.0"},
            "quote": {"amount": quote, "asset_id": "1.3.1"}}


def test_value_key_orders_as_the_exact_values():
    rng = random.Random(7)
    prices = [price(rng.randint(1, 10 ** 6), rng.randint(1, 10 ** 6)) for _ in range(300)]
    # prices whose floats are equal but whose values are not (1 + 1e-18, 1 + 2e-18, 1)
    big = 10 ** 18
    prices += [price(big + 2, big), price(big + 1, big), price(big, big), price(3, 3)]
    assert float(Fraction(big + 2, big)) == float(Fraction(big + 1, big)) == 1.0
    by_key = sorted(range(len(prices)), key=lambda i: (*value_key(prices[i]), i))
    by_value = sorted(range(len(prices)), key=lambda i: (value(prices[i]), i))
    assert by_key == by_value
    tail = [prices[i] for i in by_key if value(prices[i]) >= 1][:4]
    assert [p["base"]["amount"] for p in tail] == [big, 3, big + 1, big + 2]
