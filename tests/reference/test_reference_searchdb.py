"""nodeapi's search documents against bitshares-core 7.0.2's own
``elasticsearch`` and ``es_objects`` plugins, for the same chain.

The reference producer runs both plugins; they send their bulks to a
loopback capture server answering as Elasticsearch 7
(kit.es_capture: they would take osmem-server's 3.8.0 for an Elasticsearch 6
and add ``_type``).  Its plugins keep no history in memory, so a second
reference node follows it over P2P with ``account_history``, and a nodeapi
indexer (``--upstream``, ``--plugins searchdb``) follows that one.  A nodeapi
node following the producer over RPC (``--seed-node``) runs
``searchdb-objects`` (an indexer has no chain state to take objects
from).  Both nodeapi processes write to osmem-server.

Transactions on the producer: the genesis balance claim, a transfer, an
account creation, a user-issued asset with a market fee, its issue, limit
orders that fill (and one that stays on the book), a transfer of the asset,
a smartcoin with a feed producer, its feed and a debt position, a
proposal.  Then
every document is compared field by field: operation documents by ``_id``
(2.9.N), object documents by index and ``_id``; each difference must be
one of docs/searchdb-plugin.rst "Against bitshares-core"
(kit.es_compare.DOCUMENTED).
"""

import calendar
import os
import time

import pytest
from osmem_server import OsmemServer

from nodeapi.protocol.flags import GLOBAL_SETTLE

from kit.chain import account_options, asset_options, claim_wire, key_auth
from kit.daemon import Daemon
from kit.es_capture import Capture, bulk_actions
from kit.es_compare import DOCUMENTED, final_documents, stored_documents, undocumented
from kit.keys import OTHER_PUB
from kit.paths import ROOT
from kit.reference import requires_reference, start_reference
from kit.signing import sign_wire_over_head
from kit.smartcoin import bitasset_opts, feed
from kit.wait import wait_until

pytestmark = [pytest.mark.reference, pytest.mark.slow, requires_reference]

INIT0, INIT1 = "1.2.6", "1.2.7"
CORE = "1.3.0"


def amt(n, asset_id=CORE):
    return {"amount": n, "asset_id": asset_id}


def broadcast(ref, *ops):
    """One transaction of ``ops`` to the reference, waiting for its block;
    the operation results (``ref.last_block``: its block number)."""
    trx = sign_wire_over_head(ref, list(ops))
    done = ref.call("broadcast_transaction_synchronous", trx, api="network_broadcast",
                    timeout=60)
    ref.last_block = done["block_num"]
    return done["trx"]["operation_results"]


def reference_plugin_options(url):
    """The reference plugins' options: every bulk sent at once (the
    es_objects plugin sends only full bulks: one line each), the visitor
    and the operation string on (nodeapi's documents carry both)."""
    return ["--elasticsearch-node-url", url, "--elasticsearch-bulk-replay", "2",
            "--elasticsearch-bulk-sync", "2", "--elasticsearch-visitor", "true",
            "--elasticsearch-operation-string", "true",
            "--es-objects-elasticsearch-url", url, "--es-objects-bulk-replay", "1",
            "--es-objects-bulk-sync", "1"]


def run_transactions(ref):
    """The transactions (module text); returns the block of the last one."""
    broadcast(ref, claim_wire())
    broadcast(ref, [0, {"from": INIT0, "to": INIT1, "amount": amt(5 * 10 ** 9),
                        "extensions": []}])
    [[_t, alice]] = broadcast(ref, [5, {
        "registrar": INIT0, "referrer": INIT0, "referrer_percent": 0, "name": "alice-ref",
        "owner": key_auth(OTHER_PUB), "active": key_auth(OTHER_PUB),
        "options": account_options(OTHER_PUB), "extensions": {}}])
    [[_t, gold]] = broadcast(ref, [10, {
        "issuer": INIT0, "symbol": "GOLD", "precision": 3,
        "common_options": asset_options(percent=100, max_market_fee=10 ** 6),
        "is_prediction_market": False, "extensions": []}])
    broadcast(ref, [14, {"issuer": INIT0, "asset_to_issue": amt(10 ** 8, gold),
                         "issue_to_account": INIT1, "extensions": []}])
    broadcast(ref, [1, {"seller": INIT0, "amount_to_sell": amt(10 ** 7),
                        "min_to_receive": amt(10 ** 4, gold),
                        "expiration": "2100-01-01T00:00:00", "fill_or_kill": False,
                        "extensions": {}}],
              [1, {"seller": INIT0, "amount_to_sell": amt(3 * 10 ** 7),
                   "min_to_receive": amt(10 ** 4, gold),
                   "expiration": "2100-01-01T00:00:00", "fill_or_kill": False,
                   "extensions": {}}],
              [1, {"seller": INIT0, "amount_to_sell": amt(10 ** 6),
                   "min_to_receive": amt(10 ** 6, gold),  # stays on the book
                   "expiration": "2100-01-01T00:00:00", "fill_or_kill": False,
                   "extensions": {}}])
    broadcast(ref, [1, {"seller": INIT1, "amount_to_sell": amt(2 * 10 ** 4, gold),
                        "min_to_receive": amt(10 ** 7), "expiration": "2100-01-01T00:00:00",
                        "fill_or_kill": False, "extensions": {}}])
    broadcast(ref, [0, {"from": INIT1, "to": alice, "amount": amt(10 ** 3, gold),
                        "extensions": []}])
    # a smartcoin backed by TEST, its feed, a debt position
    [[_t, usd]] = broadcast(ref, [10, {
        "issuer": INIT0, "symbol": "USD", "precision": 4,
        "common_options": asset_options(perms=GLOBAL_SETTLE),
        "bitasset_opts": bitasset_opts(), "is_prediction_market": False, "extensions": []}])
    broadcast(ref, [13, {"issuer": INIT0, "asset_to_update": usd, "new_feed_producers": [INIT0],
                         "extensions": []}])
    broadcast(ref, [19, {"publisher": INIT0, "asset_id": usd, "feed": feed(usd, 1, 100),
                         "extensions": {}}])
    broadcast(ref, [3, {"funding_account": INIT1, "delta_collateral": amt(10 ** 8),
                        "delta_debt": amt(10 ** 4, usd), "extensions": {}}])
    # a proposal (its operations become text and objects in both documents)
    now = ref.call("get_dynamic_global_properties")["time"]
    expires = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(
        calendar.timegm(time.strptime(now, "%Y-%m-%dT%H:%M:%S")) + 86400))
    broadcast(ref, [22, {"fee_paying_account": INIT0, "expiration_time": expires,
                         "proposed_ops": [{"op": [0, {
                             "fee": amt(0), "from": INIT1, "to": alice, "amount": amt(7),
                             "extensions": []}]}], "extensions": []}])
    return ref.last_block


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The nodes of the module text, the transactions run and every
    document in: ``Run`` (``.actions``: the reference's bulk actions,
    ``.history``: its operation documents, ``.osmem``: nodeapi's database)."""
    tmp = tmp_path_factory.mktemp("searchdb-reference")
    stack = []
    try:
        capture = Capture(str(tmp / "capture"))
        stack.append(capture)
        producer = start_reference(
            tmp, "producer",
            plugins=("witness", "market_history", "api_helper_indexes", "elasticsearch",
                     "es_objects"),
            extra=reference_plugin_options(capture.url))
        stack.append(producer)
        follower = start_reference(tmp, "follower", produce=False, seed_node=producer.p2p)
        stack.append(follower)
        osmem = OsmemServer.start(addr="127.0.0.1:0", japanese=False)
        stack.append(osmem)
        indexer = Daemon(str(tmp / "indexer"), "--upstream", follower.ws_url,
                         "--plugins", "searchdb", "--searchdb-node-url", osmem.url,
                         "--searchdb-visitor", "true", "--upstream-irreversible-only", "false")
        stack.append(indexer)  # stopped even when its start fails
        indexer.start()
        node = Daemon(str(tmp / "nodeapi"), "--seed-node", producer.ws_url,
                      "--plugins", "searchdb searchdb-objects", "--searchdb-node-url", osmem.url,
                      "--searchdb-visitor", "true", "--searchdb-index-prefix", "node-")
        stack.append(node)
        node.start()

        last = run_transactions(producer)
        follower.wait_head(last)
        wait_until(lambda: node.head()[0] >= last, timeout=60, what=f"nodeapi at block {last}")
        # the reference sends each block's bulks as it applies it
        actions = wait_until(lambda: _objects_sent(capture, last), timeout=30,
                             what=f"the reference's objects of block {last}")
        history = [a for a in actions if a[1]["_index"].startswith("bitshares-")]
        theirs = final_documents(history, "bitshares-")

        def caught_up(prefix):
            return lambda: len(stored_documents(osmem.url, prefix)) >= len(theirs)

        wait_until(caught_up("chain-"), timeout=60, what="the indexer's documents")
        wait_until(caught_up("node-"), timeout=60, what="the nodeapi node's documents")
        wait_until(lambda: _objects_at(osmem.url, last), timeout=60,
                   what=f"nodeapi's objects of block {last}")
        yield Run(actions, history, theirs, osmem, producer, node)
    finally:
        for part in reversed(stack):
            stop = getattr(part, "stop", None) or part.close
            stop()


class Run:
    """What the tests compare, and the producer and the following node
    (still running) to read objects from."""

    def __init__(self, actions, history, theirs, osmem, producer, node):
        self.actions, self.history, self.theirs, self.osmem = actions, history, theirs, osmem
        self.producer, self.node = producer, node


def docs_labels():
    """The section labels of docs/searchdb-plugin.rst."""
    with open(os.path.join(ROOT, "docs", "searchdb-plugin.rst")) as f:
        return {line[4:-1] for line in f.read().splitlines() if line.startswith(".. _")}


def test_documented_differences_name_their_sections():
    labels = docs_labels()
    assert {section for section, *_rest in DOCUMENTED} <= labels
    assert {"searchdb-index-names", "searchdb-bulk-action"} <= labels


def test_operation_documents_match_the_elasticsearch_plugin(run):
    """The indexer's and the following node's operation documents: the
    reference's, field by field, but for the documented differences."""
    theirs = run.theirs
    # documents of every kind of the transactions, a fill among them
    kinds = {doc["operation_type"] for doc in theirs.values()}
    assert {37, 0, 5, 10, 14, 1, 4, 13, 19, 3, 22} <= kinds, kinds
    assert any(doc["operation_history"]["is_virtual"] for doc in theirs.values())
    # searchdb-bulk-action: the reference indexes, nodeapi creates; no _type
    # on an Elasticsearch 7
    assert {kind for kind, _meta, _doc in run.history} == {"index"}
    assert all("_type" not in meta for _kind, meta, _doc in run.actions)
    problems = []
    for prefix, who in (("chain-", "indexer"), ("node-", "node")):
        ours = stored_documents(run.osmem.url, prefix)
        # searchdb-index-names: the same month, nodeapi's prefix
        mapped = {(index.replace("bitshares-", prefix, 1), doc_id): doc
                  for (index, doc_id), doc in theirs.items()}
        assert sorted(ours) == sorted(mapped), who
        for key, doc in sorted(mapped.items()):
            problems += [(who, key, *d) for d in undocumented("history", doc, ours[key])]
    assert not problems, "\n".join(map(repr, problems))


def test_object_documents_match_the_es_objects_plugin(run):
    """The following node's object documents (the last one of each object,
    with the block that wrote it): the reference's, field by field, but
    for the documented differences."""
    their_objects = final_documents(run.actions, "objects-")
    our_objects = stored_documents(run.osmem.url, "objects-")
    assert {index for index, _id in their_objects} >= {
        "objects-account", "objects-asset", "objects-balance", "objects-limitorder",
        "objects-bitasset", "objects-budget", "objects-proposal"}
    # a filled order's document was deleted
    assert any(kind == "delete" and meta["_index"] == "objects-limitorder"
               for kind, meta, _doc in run.actions)
    problems = []
    for key in sorted(set(their_objects) | set(our_objects)):
        if key not in our_objects or key not in their_objects:
            problems.append((key, "document", their_objects.get(key, "<none>"),
                             our_objects.get(key, "<none>")))
            continue
        problems += [(key, *d)
                     for d in undocumented("objects", their_objects[key], our_objects[key])]
    # an object the two chains hold differently is a chain difference
    # (tests/reference's object comparisons), not the plugin's: named so
    states = {}
    for key in {p[0] for p in problems}:
        [ref_state] = run.producer.call("get_objects", [key[1]])
        [our_state] = run.node.call("get_objects", [key[1]])
        if undocumented("objects", dict(ref_state or {}, object_id=key[1]),
                        dict(our_state or {}, object_id=key[1])):
            states[key] = "the chains' objects differ (get_objects)"
    assert not problems, "\n".join(repr(p) + (f"  [{states[p[0]]}]" if p[0] in states else "")
                                    for p in problems)


def _objects_sent(capture, last):
    """The reference's bulk actions once one object document carries block
    ``last``, else None."""
    actions = bulk_actions(capture.requests())
    return actions if any(doc and doc.get("block_number") == last
                          for _kind, _meta, doc in actions) else None


def _objects_at(url, head):
    """nodeapi's object documents once one carries block ``head`` or later
    (the node shipped its last block's objects), else None."""
    docs = stored_documents(url, "objects-")
    return docs if any(d["block_number"] >= head for d in docs.values()) else None
