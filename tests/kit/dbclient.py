"""The search database as an operator's client sees it, over synchronous
HTTP (requests): count and search on ``chain-*`` (docs/searchdb-plugin.rst,
"Endpoints"; docs/wire-contract.rst section 8), and comparing a document's
``op`` JSON with the wire form."""

import json

import requests

PREFIX = "chain-"


class DB:
    """The spec's client calls on ``{db_url}``; paths carry the type
    ``data`` only on an Elasticsearch 6 server (wire-contract section 8)."""

    def __init__(self, url):
        self.url = url.rstrip("/")
        version = requests.get(self.url + "/", timeout=10).json()["version"]
        es6 = (version.get("distribution", "elasticsearch") != "opensearch"
               and version["number"].startswith("6."))
        self.typed = "/data" if es6 else ""

    def get(self, what, body=None):
        resp = requests.request("GET", f"{self.url}/{PREFIX}*{self.typed}/{what}?pretty=true",
                                json=body, timeout=10)
        assert resp.status_code == 200, resp.text
        return resp.json()

    def count(self):
        requests.post(f"{self.url}/{PREFIX}*/_refresh", timeout=10)
        return self.get("_count", {"query": {"bool": {"must": [{"match_all": {}}]}}})

    def search(self, must, source=None):
        body = {"query": {"bool": {"must": must}}, "size": 100}
        if source is not None:
            body["_source"] = source
        return self.get("_search", body)["hits"]["hits"]


def wire_ints(value):
    """``value`` with every decimal-string integer made a number: the wire
    JSON writes 64-bit integers outside the signed 32-bit range as strings
    (wire-contract section 3), the documents' ``op`` strings as numbers."""
    if isinstance(value, dict):
        return {k: wire_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [wire_ints(v) for v in value]
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


def same_wire(doc_json: str, wire) -> bool:
    """The document's ``op`` JSON string equals the wire JSON ``wire``."""
    return wire_ints(json.loads(doc_json)) == wire_ints(wire)
