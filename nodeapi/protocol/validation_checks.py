"""The checks operations' ``validate()`` share, on wire (JSON) values.

Reference: bitshares-core libraries/protocol: account.cpp (``is_valid_name``,
``is_cheap_name``, ``account_options::validate``), asset_ops.cpp
(``is_valid_symbol``, ``asset_options::validate``,
``bitasset_options::validate``), asset.cpp (``price::validate``,
``price_feed::validate``), authority.hpp (``is_impossible``, ``num_auths``),
special_authority.cpp, chain_parameters.cpp, config.hpp (limits).

A failed check raises :class:`~nodeapi.protocol.errors.InvalidOperation`
with graphene's text ``Assert Exception: <condition>: <message>`` (clients
such as python-bitshares match on ``Assert Exception: is_valid_name( name )``).
"""

from nodeapi.protocol.config import (
    CORE_ASSET, GRAPHENE_100_PERCENT, MAX_ACCOUNT_NAME_LENGTH, MAX_ASSET_SYMBOL_LENGTH,
    MAX_BLOCK_INTERVAL, MAX_COLLATERAL_RATIO, MAX_MARKET_FEE_NETWORK_PERCENT, MAX_SHARE_SUPPLY,
    MIN_ACCOUNT_NAME_LENGTH, MIN_ASSET_SYMBOL_LENGTH, MIN_BLOCK_INTERVAL, MIN_BLOCK_SIZE_LIMIT,
    MIN_COLLATERAL_RATIO, MIN_TRANSACTION_SIZE_LIMIT, NULL_ACCOUNT)
from nodeapi.protocol.asset import is_null
from nodeapi.protocol.errors import InvalidOperation
from nodeapi.protocol.flags import (
    ASSET_ISSUER_PERMISSION_MASK, COMMITTEE_FED_ASSET, GLOBAL_SETTLE, WHITE_LIST, WITNESS_FED_ASSET)
from nodeapi.protocol.serialize import to_int


def check(condition, expression: str, message: str = "") -> None:
    """graphene ``FC_ASSERT( expression, message )``."""
    if not condition:
        raise InvalidOperation(f"Assert Exception: {expression}: {message}")


def num(value) -> int:
    """An integer wire value (number or decimal string)."""
    return to_int(value, "amount")


def amount(asset: dict) -> int:
    """The ``amount`` of an ``asset`` dict."""
    return num(asset["amount"])


def fee_non_negative(data: dict, message: str = "") -> None:
    """graphene ``FC_ASSERT( fee.amount >= 0 )`` with ``message``."""
    check(amount(data["fee"]) >= 0, "fee.amount >= 0", message)


#: the later operations' text for a negative fee
FEE_NOT_NEGATIVE = "Fee should not be negative"


def checked_fee(data: dict, message: str = FEE_NOT_NEGATIVE) -> None:
    """:func:`fee_non_negative` with the later operations' default text."""
    fee_non_negative(data, message)


def positive_field(data: dict, field: str, message: str, fee_message: str = FEE_NOT_NEGATIVE):
    """The fee is not negative and ``data[field]`` (an asset) is positive."""
    checked_fee(data, fee_message)
    check(amount(data[field]) > 0, f"{field}.amount > 0", message)


def extensions_of(data: dict) -> dict:
    """The operation's ``extensions`` when given as an object, else ``{}``."""
    ext = data.get("extensions")
    return ext if isinstance(ext, dict) else {}


def _label(s: str) -> bool:
    """One dot-separated label of ``is_valid_name``."""
    if not s or not ("a" <= s[0] <= "z"):
        return False
    if not (s[-1].isascii() and (s[-1].isdigit() or "a" <= s[-1] <= "z")):
        return False
    return all(c == "-" or (c.isascii() and (c.isdigit() or "a" <= c <= "z"))
               for c in s[1:-1])


def is_valid_name(name) -> bool:
    """graphene ``is_valid_name``: 1-63 characters; dot-separated labels,
    each a lower-case letter first, letters/digits/'-' inside, a letter or
    digit last."""
    if not isinstance(name, str):
        return False
    if not MIN_ACCOUNT_NAME_LENGTH <= len(name) <= MAX_ACCOUNT_NAME_LENGTH:
        return False
    return all(_label(part) for part in name.split("."))


def is_valid_symbol(symbol) -> bool:
    """graphene ``is_valid_symbol``: 3-16 characters of A-Z, 0-9 and at most
    one '.', a letter first, a letter or digit last, not starting "BIT"."""
    if not isinstance(symbol, str) or not symbol.isascii():
        return False
    if len(symbol) < MIN_ASSET_SYMBOL_LENGTH or symbol.startswith("BIT"):
        return False
    if len(symbol) > MAX_ASSET_SYMBOL_LENGTH:
        return False
    if not symbol[0].isalpha() or not symbol[-1].isalnum():
        return False
    if symbol.count(".") > 1:
        return False
    return all(c.isdigit() or ("A" <= c <= "Z") or c == "." for c in symbol)


def is_impossible(auth: dict) -> bool:
    """``authority::is_impossible``: the weights cannot reach the threshold."""
    total = sum(num(w) for key in ("account_auths", "key_auths", "address_auths")
                for _k, w in auth.get(key) or ())
    return total < num(auth.get("weight_threshold", 0))


def num_auths(auth: dict) -> int:
    """``authority::num_auths``: the number of account, key and address entries
    of the authority ``auth`` (authority.hpp)."""
    return sum(len(auth.get(k) or ()) for k in ("account_auths", "key_auths", "address_auths"))


def is_null_authority(auth: dict) -> bool:
    """``== authority::null_authority()``: threshold 1, only 1.2.3 at 1."""
    return (num(auth.get("weight_threshold", 0)) == 1
            and [list(p) for p in auth.get("account_auths") or ()] == [[NULL_ACCOUNT, 1]]
            and not auth.get("key_auths") and not auth.get("address_auths"))


def account_authority(auth: dict, what: str, verb: str) -> None:
    """account_create/update's checks of an owner/active authority."""
    check(num_auths(auth) != 0, f"{what}.num_auths() != 0")
    check(not auth.get("address_auths"), f"{what}.address_auths.size() == 0")
    check(not is_impossible(auth), f"!{what}.is_impossible()",
          f"cannot {verb} an account with an impossible {what} authority threshold")


def special_authority(value) -> None:
    """``validate_special_authority``: top holders need ``num_top_holders > 0``."""
    if value is not None and value[0] == 1:
        check(num(value[1]["num_top_holders"]) > 0, "a.num_top_holders > 0")


def account_options(options: dict) -> None:
    """``account_options::validate``: as many witness / committee votes as
    ``num_witness`` / ``num_committee`` at least (vote type 1 / 0)."""
    witnesses, committee = num(options.get("num_witness", 0)), num(options.get("num_committee", 0))
    for vote in options.get("votes") or ():
        kind = int(vote.split(":")[0])
        if kind == 1 and witnesses > 0:
            witnesses -= 1
        elif kind == 0 and committee > 0:
            committee -= 1
    check(witnesses == 0 and committee == 0,
          "needed_witnesses == 0 && needed_committee == 0",
          "May not specify fewer witnesses or committee members than the number voted for.")


def price(p: dict, check_upper_bound: bool = False) -> None:
    """``price::validate``."""
    check(amount(p["base"]) > 0, "base.amount.value > 0", "Base amount should be positive")
    check(amount(p["quote"]) > 0, "quote.amount.value > 0", "Quote amount should be positive")
    check(p["base"]["asset_id"] != p["quote"]["asset_id"], "base.asset_id != quote.asset_id",
          "Base asset ID and quote asset ID should be different")
    if check_upper_bound:
        check(amount(p["base"]) <= MAX_SHARE_SUPPLY, "base.amount.value <= max",
              f"Base amount should not be greater than {MAX_SHARE_SUPPLY}")
        check(amount(p["quote"]) <= MAX_SHARE_SUPPLY, "quote.amount.value <= max",
              f"Quote amount should not be greater than {MAX_SHARE_SUPPLY}")


def ratio_in_range(value, expression: str) -> None:
    """Check a collateral ratio (per mille) is within
    ``GRAPHENE_MIN_COLLATERAL_RATIO``..``GRAPHENE_MAX_COLLATERAL_RATIO``
    (1001..32000), as graphene checks MSSR and MCR (asset.cpp
    ``price_feed::validate``), the bitasset options' MCR, MSSR and ICR
    (asset_ops.cpp ``bitasset_options::validate``) and a published ICR;
    ``expression`` names the field in the message.

    :raises InvalidOperation: outside the range."""
    check(MIN_COLLATERAL_RATIO <= num(value) <= MAX_COLLATERAL_RATIO,
          f"{expression} >= GRAPHENE_MIN_COLLATERAL_RATIO && <= GRAPHENE_MAX_COLLATERAL_RATIO")


def price_feed(feed: dict) -> None:
    """``price_feed::validate``."""
    if not is_null(feed["settlement_price"]):
        price(feed["settlement_price"])
    ratio_in_range(feed["maximum_short_squeeze_ratio"], "maximum_short_squeeze_ratio")
    ratio_in_range(feed["maintenance_collateral_ratio"], "maintenance_collateral_ratio")


def asset_options(o: dict) -> None:
    """``asset_options::validate``."""
    max_supply = num(o["max_supply"])
    check(0 < max_supply <= MAX_SHARE_SUPPLY, "max_supply > 0 && max_supply <= MAX_SHARE_SUPPLY")
    check(num(o["market_fee_percent"]) <= GRAPHENE_100_PERCENT,
          "market_fee_percent <= GRAPHENE_100_PERCENT")
    ext = o.get("extensions") if isinstance(o.get("extensions"), dict) else {}
    if ext.get("taker_fee_percent") is not None:
        check(num(ext["taker_fee_percent"]) <= GRAPHENE_100_PERCENT,
              "*extensions.value.taker_fee_percent <= GRAPHENE_100_PERCENT")
    check(0 <= num(o["max_market_fee"]) <= MAX_SHARE_SUPPLY,
          "max_market_fee >= 0 && max_market_fee <= GRAPHENE_MAX_SHARE_SUPPLY")
    perms, flags = num(o["issuer_permissions"]), num(o["flags"])
    check(perms & ~ASSET_ISSUER_PERMISSION_MASK == 0,
          "0 == (issuer_permissions & ~ASSET_ISSUER_PERMISSION_MASK)")
    check(flags & GLOBAL_SETTLE == 0, "0 == (flags & global_settle)",
          "Can not set global_settle flag, it is for issuer permission only")
    check(flags & (WITNESS_FED_ASSET | COMMITTEE_FED_ASSET) != WITNESS_FED_ASSET | COMMITTEE_FED_ASSET,
          "(flags & (witness_fed_asset | committee_fed_asset)) != "
          "(witness_fed_asset | committee_fed_asset)")
    cer = o["core_exchange_rate"]
    price(cer)
    check(cer["base"]["asset_id"] == CORE_ASSET or cer["quote"]["asset_id"] == CORE_ASSET,
          "core_exchange_rate.base.asset_id.instance.value == 0 || "
          "core_exchange_rate.quote.asset_id.instance.value == 0")
    if o.get("whitelist_authorities") or o.get("blacklist_authorities"):
        check(flags & WHITE_LIST, "0 != (flags & white_list)")
    white, black = set(o.get("whitelist_markets") or ()), set(o.get("blacklist_markets") or ())
    check(not white & black, "blacklist_markets.find(item) == blacklist_markets.end()")
    if ext.get("reward_percent") is not None:
        check(num(ext["reward_percent"]) <= GRAPHENE_100_PERCENT,
              "*extensions.value.reward_percent <= GRAPHENE_100_PERCENT")


def bitasset_options(o: dict) -> None:
    """``bitasset_options::validate``."""
    check(num(o["minimum_feeds"]) > 0, "minimum_feeds > 0")
    check(num(o["force_settlement_offset_percent"]) <= GRAPHENE_100_PERCENT,
          "force_settlement_offset_percent <= GRAPHENE_100_PERCENT")
    check(num(o["maximum_force_settlement_volume"]) <= GRAPHENE_100_PERCENT,
          "maximum_force_settlement_volume <= GRAPHENE_100_PERCENT")
    ext = o.get("extensions") if isinstance(o.get("extensions"), dict) else {}
    if ext.get("margin_call_fee_ratio") is not None:
        check(num(ext["margin_call_fee_ratio"]) <= MAX_COLLATERAL_RATIO,
              "*extensions.value.margin_call_fee_ratio <= GRAPHENE_MAX_COLLATERAL_RATIO")
    for name in ("initial_collateral_ratio", "maintenance_collateral_ratio",
                 "maximum_short_squeeze_ratio"):
        if ext.get(name) is not None:
            ratio_in_range(ext[name], f"*extensions.value.{name}")
    if ext.get("force_settle_fee_percent") is not None:
        check(num(ext["force_settle_fee_percent"]) <= GRAPHENE_100_PERCENT,
              "*extensions.value.force_settle_fee_percent <= GRAPHENE_100_PERCENT")
    if ext.get("black_swan_response_method") is not None:
        check(num(ext["black_swan_response_method"]) < 4,
              "*extensions.value.black_swan_response_method < bsrm_count",
              "black_swan_response_method should be less than 4")


def chain_parameters(p: dict) -> None:
    """``chain_parameters::validate`` (committee_member_update_global_parameters)."""
    for name in ("reserve_percent_of_fee", "network_percent_of_fee",
                 "lifetime_referrer_percent_of_fee"):
        check(num(p[name]) <= GRAPHENE_100_PERCENT, f"{name} <= GRAPHENE_100_PERCENT")
    check(num(p["network_percent_of_fee"]) + num(p["lifetime_referrer_percent_of_fee"])
          <= GRAPHENE_100_PERCENT,
          "network_percent_of_fee + lifetime_referrer_percent_of_fee <= GRAPHENE_100_PERCENT")
    interval = num(p["block_interval"])
    check(MIN_BLOCK_INTERVAL <= interval <= MAX_BLOCK_INTERVAL, "block_interval >= GRAPHENE_MIN_BLOCK_INTERVAL && "
          "block_interval <= GRAPHENE_MAX_BLOCK_INTERVAL")
    maintenance = num(p["maintenance_interval"])
    check(maintenance > interval, "maintenance_interval > block_interval",
          "Maintenance interval must be longer than block interval")
    check(maintenance % interval == 0, "maintenance_interval % block_interval == 0",
          "Maintenance interval must be a multiple of block interval")
    check(num(p["maximum_transaction_size"]) >= MIN_TRANSACTION_SIZE_LIMIT,
          "maximum_transaction_size >= GRAPHENE_MIN_TRANSACTION_SIZE_LIMIT",
          "Transaction size limit is too low")
    check(num(p["maximum_block_size"]) >= MIN_BLOCK_SIZE_LIMIT,
          "maximum_block_size >= GRAPHENE_MIN_BLOCK_SIZE_LIMIT", "Block size limit is too low")
    check(num(p["maximum_time_until_expiration"]) > interval,
          "maximum_time_until_expiration > block_interval",
          "Maximum transaction expiration time must be greater than a block interval")
    check(num(p["maximum_proposal_lifetime"]) - num(p["committee_proposal_review_period"])
          > interval, "maximum_proposal_lifetime - committee_proposal_review_period > "
          "block_interval",
          "Committee proposal review period must be less than the maximum proposal lifetime")
    ext = p.get("extensions") if isinstance(p.get("extensions"), dict) else {}
    if ext.get("market_fee_network_percent") is not None:
        check(num(ext["market_fee_network_percent"]) <= MAX_MARKET_FEE_NETWORK_PERCENT,
              "*extensions.value.market_fee_network_percent <= 3000",
              "The market_fee_network_percent parameter can not exceed 30%")
    if ext.get("maker_fee_discount_percent") is not None:
        check(num(ext["maker_fee_discount_percent"]) <= GRAPHENE_100_PERCENT,
              "*extensions.value.maker_fee_discount_percent <= GRAPHENE_100_PERCENT",
              "The maker_fee_discount_percent parameter can not exceed 100%")


def take_profit_actions(actions) -> None:
    """``limit_order_auto_action`` list (``on_fill``): each
    ``create_take_profit_order_action::validate`` (market.cpp)."""
    for action in actions or ():
        a = action[1]
        check(num(a.get("spread_percent", 0)) > 0, "spread_percent > 0",
              "The spread percentage must be positive")
        size = num(a.get("size_percent", GRAPHENE_100_PERCENT))
        check(size > 0, "size_percent > 0", "The size percentage must be positive")
        check(size <= GRAPHENE_100_PERCENT, "size_percent <= GRAPHENE_100_PERCENT",
              "The size percentage must not exceed 100%")
        check(num(a.get("expiration_seconds", 0)) > 0, "expiration_seconds > 0",
              "The expiration seconds must be positive")
