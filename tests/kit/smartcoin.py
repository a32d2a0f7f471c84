"""Smartcoin helpers for chain tests: a USD bitasset (precision 4) backed
by TEST (core) created by init0 with init0 as its feed producer, feeds,
borrowing, settling and the 2.4.N / 2.3.N of an asset.  Prices are
DEBT / COLLATERAL in satoshis.

Operation shapes: bitshares-core libraries/protocol (asset_ops.hpp,
market.hpp)."""

from nodeapi.protocol.flags import GLOBAL_SETTLE

from kit.chain import CORE, amt, asset_options
from kit.chain import push_wire as push

INIT0, INIT1 = "1.2.6", "1.2.7"


def price(usd, core, usd_id):
    """``usd`` USD sat per ``core`` TEST sat."""
    return {"base": amt(usd, usd_id), "quote": amt(core, CORE)}


def feed(usd_id, usd, core, mcr=1750, mssr=1100):
    return {"settlement_price": price(usd, core, usd_id), "maintenance_collateral_ratio": mcr,
            "maximum_short_squeeze_ratio": mssr,
            "core_exchange_rate": price(usd, core, usd_id)}


def bitasset_opts(**ext):
    return {"feed_lifetime_sec": 864000, "minimum_feeds": 1,
            "force_settlement_delay_sec": 3600, "force_settlement_offset_percent": 100,
            "maximum_force_settlement_volume": 2000, "short_backing_asset": CORE,
            "extensions": ext}


def create_usd(chain, symbol="USD", perms=GLOBAL_SETTLE, **ext):
    """init0's bitasset ``symbol`` with the options' extensions ``ext``,
    init0 its producer, fed 1 USD sat = 100 TEST sat; returns its id."""
    [[_t, usd]] = push(chain, [10, {
        "issuer": INIT0, "symbol": symbol, "precision": 4,
        "common_options": asset_options(perms=perms),
        "bitasset_opts": bitasset_opts(**ext), "is_prediction_market": False,
        "extensions": []}])
    push(chain, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                      "extensions": []}])
    publish(chain, usd, 1, 100)  # 1 USD sat = 100 TEST sat
    return usd


def update_bsrm(chain, usd, method):
    """asset_update_bitasset keeping the fixture options (MCFR 5 %) with
    ``method`` (None: unset)."""
    ext = {"margin_call_fee_ratio": 50}
    if method is not None:
        ext["black_swan_response_method"] = method
    push(chain, [12, {"issuer": INIT0, "asset_to_update": usd,
                      "new_options": bitasset_opts(**ext), "extensions": []}])


def publish(chain, usd, usd_amount, core_amount, publisher=INIT0, **kw):
    push(chain, [19, {"publisher": publisher, "asset_id": usd,
                      "feed": feed(usd, usd_amount, core_amount, **kw), "extensions": {}}])


def borrow(chain, account, collateral, debt, usd, **ext):
    return push(chain, [3, {"funding_account": account, "delta_collateral": amt(collateral),
                            "delta_debt": amt(debt, usd), "extensions": ext}])[0][1]


def settle(chain, account, amount, usd):
    """asset_settle; returns the extendable operation result's fields."""
    [[tag, result]] = push(chain, [17, {"account": account, "amount": amt(amount, usd),
                                        "extensions": []}])
    assert tag == 5
    return result


def fee_of(chain, op_type):
    """The flat fee of an operation type (its ``fee`` parameter)."""
    for t, params in chain.state.objects["2.0.0"]["parameters"]["current_fees"]["parameters"]:
        if t == op_type:
            return params["fee"]
    raise KeyError(op_type)


def bitasset(chain, usd):
    return chain.state.objects[chain.state.objects[usd]["bitasset_data_id"]]


def dyn(chain, usd):
    return chain.state.objects[chain.state.objects[usd]["dynamic_asset_data_id"]]
