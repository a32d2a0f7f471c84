"""Subscribers hear of the devnet's changes: a WebSocket client that called
``set_subscribe_callback`` and fetched an account with ``get_full_accounts``
(as bitsharesjs' ChainStore does) is sent the changed balance object after
``set_balance`` and ``revert`` (changes outside a block, notified as after
one: bitshares-core database_api.cpp ``handle_object_changed``), and after
``create_account`` and ``advance_time`` (blocks)."""

import json
import time

import pytest
import websocket

from nodeapi.devnet.pytest_plugin import DevnetProcess

pytestmark = pytest.mark.slow
CORE = "1.3.0"


@pytest.fixture(scope="module")
def devnet():
    process = DevnetProcess("--devnet-accounts", "2").start()
    yield process
    process.stop()


class Subscriber:
    """A WebSocket client subscribed to ``name``'s full account."""

    def __init__(self, url: str, name: str) -> None:
        self.ws = websocket.create_connection(url, timeout=10)
        self.next_id = 0
        self.call("database", "set_subscribe_callback", [7, False])
        [[_, full]] = self.call("database", "get_full_accounts", [[name], True])
        self.balance_id = next(b["id"] for b in full["balances"] if b["asset_type"] == CORE)

    def call(self, api, method, params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": "call",
                                 "params": [api, method, params]}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                assert "error" not in reply, reply
                return reply["result"]

    def balance_notice(self, timeout: float = 5.0, oid=None, field="balance"):
        """``field`` (default the balance) of object ``oid`` (default the
        subscribed balance object) in the next notice carrying it, or None
        after ``timeout`` s."""
        oid = oid or self.balance_id
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                message = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                return None
            if message.get("method") != "notice":
                continue
            for batch in message["params"][1]:
                for obj in batch:
                    if isinstance(obj, dict) and obj.get("id") == oid:
                        return obj[field] if field != "balance" else int(obj[field])
        return None

    def close(self):
        self.ws.close()


def test_set_balance_and_revert_are_notified(fresh):
    sub = Subscriber(fresh.url, "dev1")
    try:
        sid = fresh.snapshot()
        fresh.set_balance("dev1", 777)
        assert sub.balance_notice() == 777
        fresh.revert(sid)
        assert sub.balance_notice() == 100_000_000_000
    finally:
        sub.close()


def test_create_account_and_advance_time_are_notified(fresh):
    sub = Subscriber(fresh.url, "init0")
    try:
        fresh.create_account("newcomer", fresh.accounts[0].public_key, 5)
        assert sub.balance_notice() is not None  # the faucet paid
        fresh.set_balance("init0", 12345)
        assert sub.balance_notice() == 12345
        sub.call("database", "get_objects", [["2.1.0"], True])
        head = fresh.advance_time(3600)
        assert sub.balance_notice(oid="2.1.0", field="time") == head["time"]
    finally:
        sub.close()
