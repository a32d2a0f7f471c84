"""The gateway's pieces without a network: the raw answer form of an
upstream reply (bitshares-fc include/fc/rpc/state.hpp reflects
``response`` as ``(id)(jsonrpc)(result)(error)``), the cache of answers
that cannot change and the calls waiting for a subscription link."""

import pytest
from twisted.internet.task import Clock

from nodeapi.config_parse import parse_chain_id
from nodeapi.gateway.cache import ForwardedAnswerCache, cache_key
from nodeapi.errors import ApiError
from nodeapi.peers.replies import raw_result
from nodeapi.gateway.link_wait import LINK_WAIT, LinkWait


def test_the_result_bytes_of_a_reply_in_fc_and_nodeapi_form():
    assert raw_result(b'{"id":7,"jsonrpc":"2.0","result":{"a":[1,"2"]}}') == \
        (7, b'{"a":[1,"2"]}')
    assert raw_result(b'{"id":12,"result":null}') == (12, b"null")
    assert raw_result(b'{"id":3,"result":"x}"}') == (3, b'"x}"')


def test_other_forms_are_left_to_the_decoder():
    assert raw_result(b'{"id": 7, "result": 1}') is None  # spaces
    assert raw_result(b'{"jsonrpc":"2.0","id":7,"result":1}') is None  # key order
    assert raw_result(b'{"id":7,"error":{"code":1,"message":"m"}}') is None
    assert raw_result(b'{"id":7,"result":1,"error":null}') is None
    assert raw_result(b'{"method":"notice","params":[1,[2]]}') is None
    assert raw_result(b'{"id":"7","result":1}') is None  # not our id form


def test_cache_keys_of_calls_that_cannot_change():
    assert cache_key("database", "get_chain_id", []) == (("database", "get_chain_id"), None)
    assert cache_key("database", "get_block", [5]) == (("database", "get_block", 5), 5)
    assert cache_key("database", "get_block", ["5"]) == (("database", "get_block", 5), 5)
    assert cache_key("database", "get_transaction", [9, 0]) == \
        (("database", "get_transaction", 9, 0), 9)
    assert cache_key("database", "get_block_header_batch", [[3, 8]]) == \
        (("database", "get_block_header_batch", 3, 8), 8)
    assert cache_key("block", "get_blocks", [2, 4]) == (("block", "get_blocks", 2, 4), 4)
    for api, method, args in (("database", "get_block", []), ("database", "get_block", [-1]),
                              ("database", "get_block", [1.5]),
                              ("database", "get_block", ["x"]),
                              ("database", "get_dynamic_global_properties", []),
                              ("database", "get_transaction", [9]),
                              ("database", "get_block_header_batch", [[]]),
                              ("database", "get_accounts", [["1.2.6"]])):
        assert cache_key(api, method, args) is None, (method, args)


def test_the_cache_keeps_only_final_answers_within_its_bytes():
    cache = ForwardedAnswerCache(max_bytes=10)
    assert not cache.put("a", b"1234", 8, lib=7)  # above the irreversible block
    assert not cache.put("a", b"null", 5, lib=7)  # no such block
    assert cache.put("a", b"1234", 7, lib=7) and cache.put("k", b"ab", None, lib=0)
    assert cache.get("a") == b"1234" and cache.size == 6
    assert cache.put("b", b"123456", 1, lib=7)  # 12 bytes: the oldest used goes ("k")
    assert cache.get("k") is None and cache.get("a") == b"1234" and cache.size == 10
    assert not cache.put("c", b"x" * 11, 1, lib=7)  # larger than the whole cache
    assert (cache.hits, cache.misses) == (2, 1)


def test_the_chain_id_option_takes_64_hex_digits():
    assert parse_chain_id("") == ""
    assert parse_chain_id('"' + "AB" * 32 + '"') == "ab" * 32
    for bad in ("ab" * 31, "zz" * 32, "ab" * 33):
        with pytest.raises(ValueError, match="64 hex digits"):
            parse_chain_id(bad)


def test_calls_waiting_for_a_link_go_on_fail_or_time_out():
    clock = Clock()
    waits = LinkWait(clock)
    results = []
    for _ in range(2):
        waits.wait().addBoth(results.append)
    waits.release("link")
    assert results == ["link", "link"] and not clock.getDelayedCalls()
    refused = ApiError("refused")
    waits.wait().addBoth(results.append)
    waits.fail(refused)
    assert results[2].value is refused and not clock.getDelayedCalls()
    waits.wait().addBoth(results.append)
    clock.advance(LINK_WAIT - 0.1)
    assert len(results) == 3
    clock.advance(0.1)
    assert results[3].check(ApiError)
    assert "No upstream node is available for subscriptions" in str(results[3].value)
    waits.release("late")  # nobody waits any more
    assert len(results) == 4


def test_health_fails_when_no_upstream_serves_reads_and_names_why():
    """A gateway's figures carry its upstreams' states
    (UpstreamPool.states): /healthz is not ok when none serves, and the
    problem names each with the fault that opened its breaker."""
    from nodeapi.metrics_health import HealthLimits, health
    from nodeapi.metrics_status import render_status

    def figures(*states):
        return {"replay": None, "head_block_age": 1.0, "searchdb": None,
                "upstream": {"lag_blocks": 0, "lag_seconds": 1.0, "reconnects": 0,
                             "upstreams": [dict(zip(("upstream", "state", "fault"), s))
                                           for s in states]}}

    limits = HealthLimits()
    report = health(figures(("a:1", "serving", None), ("b:2", "down", "invalid JSON")), limits)
    assert report["ok"] and report["problems"] == []
    report = health(figures(("a:1", "lagging", None), ("b:2", "down", "invalid JSON")), limits)
    assert not report["ok"]
    assert report["problems"] == ["no upstream serves reads: a:1 lagging; b:2 down "
                                  "(invalid JSON)"]
    for one in report["upstream"]["upstreams"]:
        one.update(head_block_num=7, lag_blocks=4)
    report.update(head_block_num=7, head_block_id=None, head_block_time=None,
                  last_irreversible_block_num=None, participation=None, blocks_produced=None,
                  peers=[], rpc=None)
    page = render_status(report)
    assert 'id="upstream0_state">lagging<' in page
    assert 'id="upstream1_fault">invalid JSON<' in page


def test_the_items_a_subscribing_read_may_take():
    """What a read is charged before it is sent upstream
    (nodeapi.gateway.subscribing_reads.items_of): each id or name not held
    (never operation or account history, bitshares-core's
    ``get_objects``), two per liquidity pool, one for ``lookup_accounts``
    and ``get_htlc``; a malformed argument counts nothing."""
    from nodeapi.gateway.subscribing_reads import items_of

    held = {"2.1.0"}
    assert items_of("get_objects", [["2.1.0", "1.2.7", "1.11.4", "2.9.1", "1.2.7"]],
                    held) == 1
    assert items_of("get_full_accounts", [["init1", "1.2.8", "2.1.0"], True], held) == 2
    assert items_of("get_liquidity_pools", [["1.19.0", "1.19.1"], True, True], held) == 4
    assert items_of("lookup_accounts", ["init", 1, True], held) == 1
    assert items_of("get_htlc", ["1.16.0"], held) == 1
    assert items_of("get_assets", ["TEST"], held) == 0  # not a list: the upstream refuses


def test_full_accounts_are_subscribed_in_the_order_asked():
    """bitshares-core ``get_full_accounts`` subscribes while it iterates
    its argument; its answer is a map sorted by the name or id asked."""
    from nodeapi.gateway.client_subscriptions import in_order_asked

    answer = [["1.2.9", {"account": {"id": "1.2.9"}}],
              ["init1", {"account": {"id": "1.2.7"}}],
              ["init2", {"account": {"id": "1.2.8"}}]]
    assert in_order_asked([["init2", "nobody", "1.2.9", "init1", "init2"]], answer) == [
        "1.2.8", "1.2.9", "1.2.7"]
