"""The searchdb-objects plugin (bitshares-core es_objects) against a real
osmem-server: loading the current objects, live changes and removals,
store-updates versions, the cursor across restarts, an outage, the
reference option names (docs/searchdb-plugin.rst, "Objects")."""

import os

import orjson
import pytest
import pytest_twisted
from twisted.internet import defer, reactor, task

from nodeapi.config import Options, read_ini
from nodeapi.plugins.searchdb.client import SearchDBClient
from nodeapi.plugins.searchdb_objects import plugin as objects_plugin
from nodeapi.plugins.searchdb_objects.service import CURSOR_FILE, ObjectsService
from nodeapi.plugins.searchdb_objects.settings import ObjectsOptions

from kit.chain import CORE, limit_order, produce, transfer_op
from kit.searchdb import Proxy
from kit.signing import sign, sign_wire
from kit.wait import wait_for

INIT0, INIT1 = "1.2.6", "1.2.7"


def objects_options(prefix, **switches):
    """ObjectsOptions with small bulks; ``switches`` override option names
    (``balances_store_updates=True``)."""
    values = {"bulk-replay": 7, "bulk-sync": 3, "index-prefix": prefix,
              "max-mapping-depth": 10, "start-after-block": 0, "sync-db-on-startup": False,
              "proposals-no-delete": True, "limit-orders-no-delete": False}
    values.update({k.replace("_", "-"): v for k, v in switches.items()})
    return ObjectsOptions.from_options(lambda name: values.get(name, name.count("-") == 0
                                                               or not name.endswith("updates")
                                                               and not name.endswith("delete")))


def make(url, chain, data_dir, options):
    client = SearchDBClient(url, "", reactor, request_timeout=10)
    svc = ObjectsService(client, chain, str(data_dir), reactor, options, stop_timeout=10)
    svc.shipper._policy = lambda attempt: 0.05
    chain.add_consumer(svc)
    return svc


@defer.inlineCallbacks
def documents(url, index):
    """{_id: _source} of every document of ``index`` (refreshed first)."""
    client = SearchDBClient(url, "", reactor)
    yield client.request("POST", f"/{index}/_refresh", ok=(200, 404))
    status, content = yield client.request(
        "POST", f"/{index}/_search", {"size": 10000, "query": {"match_all": {}}}, ok=(200, 404))
    yield client.close()
    if status == 404:
        return {}
    return {h["_id"]: h["_source"] for h in orjson.loads(content)["hits"]["hits"]}


def confirmed(svc):
    """A Deferred firing once the database confirmed the head's objects."""
    return wait_for(lambda: svc.cursor >= svc.chain.head_block_num and not len(svc.queue),
                    timeout=20)


def push_block(chain, *ops):
    """Push python-bitshares ``ops`` signed by the dev key and produce a block."""
    if ops:
        chain.push_transaction(sign(chain, list(ops)))
    produce(chain)


@pytest_twisted.inlineCallbacks
def test_load_live_changes_and_removals(funded, osmem, tmp_path):
    chain = funded
    svc = make(osmem.url, chain, tmp_path, objects_options("objt1-"))
    svc.startService()
    yield confirmed(svc)
    assert svc.syncs == 1
    accounts = yield documents(osmem.url, "objt1-account")
    # every account of the genesis (1.2.0 .. 1.2.17), written as of the head
    assert sorted(accounts) == sorted(chain.state.ids_of_type("1.2."))
    init0 = accounts[INIT0]
    assert (init0["object_id"], init0["name"], init0["block_number"]) == (
        INIT0, "init0", chain.head_block_num)
    # the authorities are adapted as the reference adapts them
    assert "key_auths_object" in init0["owner"]
    balances = yield documents(osmem.url, "objt1-balance")
    # a string "owner" becomes "owner_" (es_data_adaptor)
    [bid] = [b for b, d in balances.items() if d["owner_"] == INIT0]
    claimed = chain.state.balance(INIT0, CORE)
    assert int(balances[bid]["balance"]) == claimed
    assets = yield documents(osmem.url, "objt1-asset")
    assert assets["1.3.0"]["symbol"] == "TEST"
    # times in their wire form, as the reference writes them (the chain
    # keeps seconds): the genesis timestamp, the maximum time
    assert assets["1.3.0"]["creation_time"] == chain.genesis.data["initial_timestamp"]
    assert init0["membership_expiration_date"] == "2106-02-07T06:28:15"

    # a live block: a transfer changes both balances, an order is created
    fee = 2000000
    push_block(chain, transfer_op(123456, fee=fee))
    yield confirmed(svc)
    balances = yield documents(osmem.url, "objt1-balance")
    by_owner = {d["owner_"]: d for d in balances.values()}
    assert int(by_owner[INIT0]["balance"]) == claimed - 123456 - fee
    assert int(by_owner[INIT1]["balance"]) == 123456
    assert by_owner[INIT1]["block_number"] == chain.head_block_num
    yield svc.stopService()


@pytest_twisted.inlineCallbacks
def test_a_block_applied_while_loading_labels_its_objects(funded, osmem, tmp_path):
    """A block applied while the start's load runs (the load waits for its
    ``_delete_by_query`` first): the objects it changed carry that block,
    as the reference's ``sync_db`` (no block in between) leaves them, and
    the others the head the load began at."""
    chain = funded
    began = chain.head_block_num
    svc = make(osmem.url, chain, tmp_path, objects_options("objt9-"))
    svc.startService()
    assert svc._syncing
    push_block(chain, transfer_op(4321))
    yield confirmed(svc)
    balances = yield documents(osmem.url, "objt9-balance")
    by_owner = {d["owner_"]: d for d in balances.values()}
    assert int(by_owner[INIT1]["balance"]) == 4321
    assert by_owner[INIT1]["block_number"] == by_owner[INIT0]["block_number"] == began + 1
    accounts = yield documents(osmem.url, "objt9-account")
    assert accounts["1.2.8"]["block_number"] == began
    yield svc.stopService()


@pytest_twisted.inlineCallbacks
def test_limit_orders_are_deleted_unless_no_delete(funded, osmem, tmp_path):
    chain = funded
    asset = _gold(chain)
    svc = make(osmem.url, chain, tmp_path / "a", objects_options("objt2-"))
    os.makedirs(tmp_path / "a")
    svc.startService()
    yield confirmed(svc)
    order = limit_order(chain, INIT0, {"amount": 50000, "asset_id": CORE},
                        {"amount": 7, "asset_id": asset})
    produce(chain)
    yield confirmed(svc)
    orders = yield documents(osmem.url, "objt2-limitorder")
    assert list(orders) == [order]
    assert orders[order]["expiration"] == "2030-01-01T00:00:00"  # limit_order's default
    assert int(orders[order]["for_sale"]) == 50000
    assert orders[order]["seller"] == INIT0
    _cancel(chain, order)
    yield confirmed(svc)
    orders = yield documents(osmem.url, "objt2-limitorder")
    assert orders == {}
    yield svc.stopService()


@pytest_twisted.inlineCallbacks
def test_store_updates_keeps_every_version_once(funded, osmem, tmp_path):
    chain = funded
    svc = make(osmem.url, chain, tmp_path, objects_options(
        "objt3-", balances_store_updates=True, accounts=False, assets=False,
        proposals=False, limit_orders=False, asset_bitasset=False, budget_records=False))
    svc.startService()
    yield confirmed(svc)
    first = chain.head_block_num
    push_block(chain, transfer_op(1000))
    second = chain.head_block_num
    push_block(chain, transfer_op(2000))
    third = chain.head_block_num
    yield confirmed(svc)
    docs = yield documents(osmem.url, "objt3-balance")
    init1 = [d for d in docs.values() if d["owner_"] == INIT1]
    # one version per block that changed it, _id <object id>-<block>
    assert sorted((d["block_number"], int(d["balance"])) for d in init1) == [
        (second, 1000), (third, 3000)]
    assert all(_id.endswith(f"-{d['block_number']}") for _id, d in docs.items())
    assert {d["block_number"] for d in docs.values()} >= {first, second, third}
    # only balances were written
    for index in ("account", "asset", "limitorder"):
        assert (yield documents(osmem.url, f"objt3-{index}")) == {}
    yield svc.stopService()


@pytest_twisted.inlineCallbacks
def test_restart_sends_nothing_when_confirmed_and_everything_when_behind(
        funded, osmem, tmp_path):
    chain = funded
    svc = make(osmem.url, chain, tmp_path, objects_options("objt4-"))
    svc.startService()
    yield confirmed(svc)
    yield svc.stopService()
    saved = orjson.loads((tmp_path / CURSOR_FILE).read_bytes())
    assert saved == {"block": chain.head_block_num, "index_prefix": "objt4-"}

    again = make(osmem.url, chain, tmp_path, objects_options("objt4-"))
    again.startService()
    assert again.syncs == 0 and again.documents_queued == 0
    yield again.stopService()

    # the node applied blocks the database never saw: everything again
    (tmp_path / CURSOR_FILE).write_bytes(orjson.dumps({"block": 0, "index_prefix": "objt4-"}))
    third = make(osmem.url, chain, tmp_path, objects_options("objt4-"))
    third.startService()
    yield confirmed(third)
    assert third.syncs == 1 and third.documents_queued >= len(chain.state.ids_of_type("1.2."))
    yield third.stopService()


@pytest_twisted.inlineCallbacks
def test_outage_keeps_changes_queued_until_the_database_answers(funded, osmem, tmp_path):
    chain = funded
    proxy = Proxy(osmem.url)
    proxy.up()
    svc = make(proxy.url, chain, tmp_path, objects_options("objt5-"))
    svc.startService()
    yield confirmed(svc)
    yield proxy.down()
    push_block(chain, transfer_op(4444))
    push_block(chain, transfer_op(5555))
    yield wait_for(lambda: svc.shipper.retries >= 1, timeout=20)
    assert svc.cursor < chain.head_block_num
    proxy.up()
    yield confirmed(svc)
    docs = yield documents(osmem.url, "objt5-balance")
    by_owner = {d["owner_"]: d for d in docs.values()}
    assert int(by_owner[INIT1]["balance"]) == 4444 + 5555
    assert by_owner[INIT1]["block_number"] == chain.head_block_num
    yield svc.stopService()
    yield proxy.down()


@pytest_twisted.inlineCallbacks
def test_stop_loads_nothing_again(funded, osmem, tmp_path, captured):
    """The database lost an index and is unreachable when the node stops:
    the stop's flush reconnects and finds the index empty, but a stopping
    plugin starts no loading (it would empty every index and nothing
    would ship it); the next start loads the objects again."""
    chain = funded
    proxy = Proxy(osmem.url)
    proxy.up()
    svc = make(proxy.url, chain, tmp_path, objects_options("objt6-"))
    svc.startService()
    yield confirmed(svc)
    client = SearchDBClient(osmem.url, "", reactor)
    yield client.request("DELETE", "/objt6-asset")
    yield client.close()
    yield proxy.down()
    push_block(chain, transfer_op(4444))
    yield wait_for(lambda: svc.shipper.retries >= 1 and not svc.shipper.connected, timeout=20)
    stopping = svc.stopService()
    proxy.up()
    yield stopping
    yield task.deferLater(reactor, 0.1, lambda: None)  # a loading would be under way
    yield proxy.down()
    assert svc.syncs == 1
    assert not [text for _level, text, _e in captured if "loading them again" in text]
    accounts = yield documents(osmem.url, "objt6-account")
    assert sorted(accounts) == sorted(chain.state.ids_of_type("1.2."))


def test_reference_option_names(tmp_path):
    ini = tmp_path / "config.ini"
    ini.write_text("plugins = witness es_objects\n"
                   "es-objects-elasticsearch-url = http://127.0.0.1:9201/\n"
                   "es-objects-limit-orders-no-delete = true\n"
                   "es-objects-balances-store-updates = true\n"
                   "es-objects-start-es-after-block = 12\n"
                   "es-objects-index-prefix = objx-\n")
    found = read_ini(str(ini))
    assert "searchdb-objects-limit-orders-no-delete" in found
    opts = Options()
    opts.parseOptions(["--config", str(ini), "--data-dir", str(tmp_path)])
    assert "searchdb-objects" in opts["plugins"]
    client = objects_plugin.objects_client(opts, reactor)
    assert client.safe_url == "http://127.0.0.1:9201/"
    options = objects_plugin.objects_options(opts)
    assert options.index_prefix == "objx-" and options.start_after_block == 12
    assert options.kinds["1.7"].no_delete and not options.kinds["1.7"].store_updates
    assert options.kinds["2.5"].store_updates and options.kinds["2.5"].no_delete
    assert options.kinds["1.2"].enabled and not options.kinds["1.2"].store_updates


def _gold(chain):
    from kit.chain import create_asset

    asset, _fee = create_asset(chain, "GOLD")
    produce(chain)
    return asset


def _cancel(chain, order):
    ops = [[2, {"fee": {"amount": 0, "asset_id": CORE}, "fee_paying_account": INIT0,
                "order": order, "extensions": []}]]
    ops[0][1]["fee"] = chain.required_fee(ops[0])
    chain.push_transaction(sign_wire(chain, ops))
    produce(chain)


@pytest_twisted.inlineCallbacks
def test_a_wiped_database_is_loaded_again_at_start(funded, osmem, tmp_path):
    """The database confirmed the head, then lost its indexes while the
    node was down: the next start finds them empty and loads every object
    again (before, they stayed missing until each object changed)."""
    chain = funded
    svc = make(osmem.url, chain, tmp_path, objects_options("objt7-"))
    svc.startService()
    yield confirmed(svc)
    yield svc.stopService()
    client = SearchDBClient(osmem.url, "", reactor)
    yield client.request("DELETE", "/objt7-*", ok=(200, 404))
    yield client.close()
    assert (yield documents(osmem.url, "objt7-account")) == {}

    again = make(osmem.url, chain, tmp_path, objects_options("objt7-"))
    again.startService()
    yield wait_for(lambda: again.syncs == 1, timeout=20)
    expected = sorted(chain.state.ids_of_type("1.2."))
    for _ in range(200):
        accounts = yield documents(osmem.url, "objt7-account")
        if sorted(accounts) == expected:
            break
        yield task.deferLater(reactor, 0.05, lambda: None)
    assert sorted(accounts) == expected
    assert again.syncs == 1  # loaded once, not again when the shipper connected
    yield again.stopService()
