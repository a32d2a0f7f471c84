"""Server flavour detection (docs/wire-contract.rst section 8: ``version.number``
and ``version.distribution`` of ``GET /``) for the real ``GET /`` answers of
Elasticsearch 6.8, 7.17, 8.x and OpenSearch 1.x/2.x, and what the plugin
then does against each: the template path and body shape it installs, the
document type in bulk action lines and in search paths.

osmem impersonates only OpenSearch, so the other flavours are a loopback
stand-in (:class:`Flavour`) answering with the real ``GET /`` JSON and
recording every request; it checks the paths each server accepts (typed
``/data/`` search paths only on ES 6, ``_type`` in bulk action lines only on
ES 6, ``_index_template`` only from ES 7.8 / OpenSearch)."""

import json

import pytest
import pytest_twisted
from twisted.internet import reactor
from twisted.web import resource, server

from nodeapi.plugins.searchdb.client import SearchDBClient, parse_server_info
from nodeapi.plugins.searchdb.flavors import index_template

from kit.chain import open_chain
from kit.searchdb import FarClock, make_service


pytestmark = pytest.mark.slow

_BUILD = {"build_type": "docker", "build_hash": "0" * 40,
          "build_date": "2023-01-31T05:34:43.305517834Z", "build_snapshot": False}

#: ``GET /`` answers as the servers send them (field for field).
ROOTS = {
    "es-6.8": {
        "name": "es6-node", "cluster_name": "docker-cluster",
        "cluster_uuid": "kG3oVTm3QGqDHRSRzwVl5g",
        "version": {"number": "6.8.23", "build_flavor": "default", **_BUILD,
                    "lucene_version": "7.7.3",
                    "minimum_wire_compatibility_version": "5.6.0",
                    "minimum_index_compatibility_version": "5.0.0"},
        "tagline": "You Know, for Search"},
    "es-7.17": {
        "name": "es7-node", "cluster_name": "docker-cluster",
        "cluster_uuid": "1yB4hV7kQbO6d4TlM0Tb0g",
        "version": {"number": "7.17.9", "build_flavor": "default", **_BUILD,
                    "lucene_version": "8.11.1",
                    "minimum_wire_compatibility_version": "6.8.0",
                    "minimum_index_compatibility_version": "6.0.0-beta1"},
        "tagline": "You Know, for Search"},
    "es-8.11": {
        "name": "es8-node", "cluster_name": "docker-cluster",
        "cluster_uuid": "Wf8Xq2zJQ5mWcQ0v1y9m4A",
        "version": {"number": "8.11.1", "build_flavor": "default", **_BUILD,
                    "lucene_version": "9.8.0",
                    "minimum_wire_compatibility_version": "7.17.0",
                    "minimum_index_compatibility_version": "7.0.0"},
        "tagline": "You Know, for Search"},
    "opensearch-1.3": {
        "name": "opensearch-node1", "cluster_name": "opensearch-cluster",
        "cluster_uuid": "H5jK2lM9QkOeU7x2Zp4s1w",
        "version": {"distribution": "opensearch", "number": "1.3.14", "build_type": "tar",
                    "build_hash": "0" * 40, "build_date": "2023-12-06T18:37:56.557286Z",
                    "build_snapshot": False, "lucene_version": "8.10.1",
                    "minimum_wire_compatibility_version": "6.8.0",
                    "minimum_index_compatibility_version": "6.0.0-beta1"},
        "tagline": "The OpenSearch Project: https://opensearch.org/"},
    # compatibility.override_main_response_version: true (for old clients)
    "opensearch-1.3-compat": {
        "name": "opensearch-node1", "cluster_name": "opensearch-cluster",
        "cluster_uuid": "H5jK2lM9QkOeU7x2Zp4s1w",
        "version": {"distribution": "opensearch", "number": "7.10.2", "build_type": "tar",
                    "build_hash": "0" * 40, "build_date": "2023-12-06T18:37:56.557286Z",
                    "build_snapshot": False, "lucene_version": "8.10.1",
                    "minimum_wire_compatibility_version": "6.8.0",
                    "minimum_index_compatibility_version": "6.0.0-beta1"},
        "tagline": "The OpenSearch Project: https://opensearch.org/"},
    "opensearch-2.11": {
        "name": "opensearch-node1", "cluster_name": "opensearch-cluster",
        "cluster_uuid": "bX3z9QwVSyuK1yq8Yb2xEw",
        "version": {"distribution": "opensearch", "number": "2.11.1", "build_type": "tar",
                    "build_hash": "0" * 40, "build_date": "2023-11-29T21:43:10.135035992Z",
                    "build_snapshot": False, "lucene_version": "9.7.0",
                    "minimum_wire_compatibility_version": "7.10.0",
                    "minimum_index_compatibility_version": "7.0.0"},
        "tagline": "The OpenSearch Project: https://opensearch.org/"},
}

#: flavour -> (distribution, major, doc_type, template path, template flavour)
EXPECTED = {
    "es-6.8": ("elasticsearch", 6, "data", "/_template/", "es6"),
    "es-7.17": ("elasticsearch", 7, None, "/_template/", "legacy"),
    "es-8.11": ("elasticsearch", 8, None, "/_index_template/", "composable"),
    "opensearch-1.3": ("opensearch", 1, None, "/_index_template/", "composable"),
    "opensearch-1.3-compat": ("opensearch", 7, None, "/_index_template/", "composable"),
    "opensearch-2.11": ("opensearch", 2, None, "/_index_template/", "composable"),
}


@pytest.mark.parametrize("flavour", sorted(ROOTS))
def test_server_info(flavour):
    info = parse_server_info(ROOTS[flavour])
    dist, major, doc_type, path, template = EXPECTED[flavour]
    assert (info.distribution, info.major, info.doc_type) == (dist, major, doc_type)
    assert info.number == ROOTS[flavour]["version"]["number"]
    assert (info.template_path, info.template_flavor) == (path, template)
    typed = "data/" if doc_type else ""
    assert info.search_path("chain-", "_search") == f"/chain-*/{typed}_search"
    assert info.search_path("chain-", "_count") == f"/chain-*/{typed}_count"


def check_template_shape(body, flavor, prefix="chain-"):
    """The body a server of ``flavor`` accepts for ``PUT <template path>``."""
    assert body["index_patterns"] == [prefix + "*"]
    if flavor == "composable":  # ES >= 7.8 / 8, OpenSearch: _index_template
        assert set(body) == {"index_patterns", "priority", "template"}
        assert isinstance(body["priority"], int)
        assert set(body["template"]) == {"mappings"}
        mappings = body["template"]["mappings"]
    elif flavor == "es6":  # legacy _template with the mapping type "data"
        assert set(body) == {"index_patterns", "mappings"}
        assert list(body["mappings"]) == ["data"]
        mappings = body["mappings"]["data"]
    else:  # ES 7 legacy _template, typeless
        assert set(body) == {"index_patterns", "mappings"}
        mappings = body["mappings"]
    assert "properties" in mappings and "data" not in mappings
    props = mappings["properties"]
    assert props["operation_id_num"] == {"type": "long"}
    assert props["account_history"]["properties"]["account"]["fields"]["keyword"] == {
        "type": "keyword"}
    assert props["block_data"]["properties"]["block_time"] == {"type": "date"}
    assert props["operation_history"]["properties"]["op"] == {"type": "text", "index": False}


@pytest.mark.parametrize("flavor", ["es6", "legacy", "composable"])
def test_index_template_shapes(flavor):
    check_template_shape(index_template("hist-", flavor), flavor, "hist-")


class Flavour:
    """A loopback stand-in for the server of ``ROOTS[name]``: real ``GET /``
    answer, templates kept by name, bulks stored (409 for an id seen
    before), search answers in the server's ``hits.total`` form.  Paths
    the real server would refuse are answered 400 (and counted)."""

    def __init__(self, name):
        self.name = name
        self.root = ROOTS[name]
        self.info = parse_server_info(self.root)
        self.templates, self.requests, self.refused = {}, [], []
        self.actions, self.stored = [], {}
        stand_in = self

        class Root(resource.Resource):
            isLeaf = True

            def render(self, request):
                body = request.content.read()
                code, answer = stand_in.answer(request.method.decode(),
                                               request.path.decode(), body)
                request.setResponseCode(code)
                request.setHeader(b"content-type", b"application/json")
                return json.dumps(answer).encode()
        self.port = reactor.listenTCP(0, server.Site(Root()), interface="127.0.0.1")
        self.url = f"http://127.0.0.1:{self.port.getHost().port}/"

    def refuse(self, method, path, why):
        self.refused.append(f"{method} {path}: {why}")
        return 400, {"error": {"type": "illegal_argument_exception", "reason": why}}

    def answer(self, method, path, body):
        self.requests.append((method, path))
        typed = self.info.doc_type == "data"
        if path == "/":
            return 200, self.root
        for kind in ("/_template/", "/_index_template/"):
            if path.startswith(kind):
                if kind != self.info.template_path:
                    return self.refuse(method, path, "wrong template API for this version")
                name = path[len(kind):]
                if method == "GET":
                    return (200, {name: self.templates[name]}) if name in self.templates \
                        else (404, {})
                self.templates[name] = json.loads(body)
                return 200, {"acknowledged": True}
        if path.endswith("/_refresh"):
            return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
        if path.endswith("/_search") or path.endswith("/_count"):
            if ("/data/" in path) != typed:
                return self.refuse(method, path, "typed path on a typeless server or back")
            if path.endswith("/_count"):
                return 200, {"count": len(self.stored)}
            total = 0 if typed else {"value": 0, "relation": "eq"}
            return 200, {"hits": {"total": total, "hits": []},
                         "aggregations": {"top": {"value": None}}}
        if path == "/_bulk":
            lines = body.splitlines()
            items = []
            for action_line, doc_line in zip(lines[::2], lines[1::2]):
                action = json.loads(action_line)["create"]
                self.actions.append(action)
                if ("_type" in action) != typed or (typed and action["_type"] != "data"):
                    return self.refuse(method, path, "action line type mismatch")
                status = 409 if action["_id"] in self.stored else 201
                self.stored.setdefault(action["_id"], json.loads(doc_line))
                items.append({"create": {"_index": action["_index"], "_id": action["_id"],
                                         "status": status}})
            return 200, {"took": 1, "errors": False, "items": items}
        return self.refuse(method, path, "unexpected request")


@pytest.mark.parametrize("flavour", sorted(ROOTS))
@pytest_twisted.inlineCallbacks
def test_plugin_against_each_flavour(flavour, genesis, history_log, tmp_path):  # noqa: F811
    """prepare() detects the server, installs the right template once,
    bulks carry the type only on ES 6, the resume query uses the server's
    path form; every document arrives."""
    path, expected = history_log
    stand_in = Flavour(flavour)
    _dist, _major, doc_type, template_path, flavor = EXPECTED[flavour]
    chain = open_chain(genesis, path)
    svc = make_service(stand_in.url, chain, str(tmp_path), bulk_replay=10, clock=FarClock())
    chain.add_consumer(svc)
    try:
        yield svc.prepare()
        assert svc.shipper.connected and svc.client.info.doc_type == doc_type
        yield chain.replay()
        svc.startService()
        yield svc.stopService()
        # a second client finds the template and does not install it again
        again = SearchDBClient(stand_in.url, "", reactor)
        yield again.detect()
        installed = yield again.ensure_template("chain-template", {"x": 1})
        yield again.close()
    finally:
        yield stand_in.port.stopListening()
        chain.block_log.close()
    assert stand_in.refused == []
    assert installed is False
    assert ("PUT", template_path + "chain-template") in stand_in.requests
    assert list(stand_in.templates) == ["chain-template"]
    check_template_shape(stand_in.templates["chain-template"], flavor)
    typed = "data/" if doc_type else ""
    assert ("POST", f"/chain-*/{typed}_search") in stand_in.requests
    assert all(a.get("_type") == doc_type for a in stand_in.actions)
    assert sorted(stand_in.stored) == sorted(f"2.9.{n}" for n in expected)
    assert svc.documents_shipped == len(expected) and svc.documents_failed == 0
