"""A loopback HTTP server answering as Elasticsearch 7 does, recording every
request: what bitshares-core's ``elasticsearch`` and ``es_objects`` plugins
send (docs/searchdb-plugin.rst "Against bitshares-core").

The reference plugins read osmem-server's version (3.8.0) as an
Elasticsearch older than 7 and add ``_type`` to their action lines, so the
reference talks to this server instead.  It answers the calls the plugins
make (bitshares-core libraries/utilities/elasticsearch.cpp):
``GET /_nodes`` (``es_client::check_status``: any content), ``GET /``
(``get_version``: ``version.number`` 7.17.0), ``POST /_bulk``
(``send_bulk``: ES 7's answer, ``errors: false``, one item per action) and
``POST /<index>/_delete_by_query`` (es_objects ``delete_all_from_database``);
anything else is answered 404 as ES does, and recorded too.

Run it in its own process (the reference blocks on it while a test blocks
on the reference)::

    python -m kit.es_capture OUT.jsonl PORT_FILE

It listens on ``127.0.0.1``, an ephemeral port written to ``PORT_FILE``
once listening, and appends one JSON line per request to ``OUT.jsonl``
(``{"method", "path", "body"}``, flushed at once).  :class:`Capture` starts
and stops it from a test and reads the recording back
(:func:`bulk_actions`).
"""

import json
import os
import re
import subprocess
import sys
import time

#: a request body larger than this is refused (413), as ES refuses bodies
#: over ``http.max_content_length``
MAX_BODY = 64 << 20

VERSION = {"name": "capture", "cluster_name": "capture", "cluster_uuid": "capture",
           "version": {"number": "7.17.0", "build_flavor": "default", "build_type": "tar",
                       "lucene_version": "8.11.1", "minimum_wire_compatibility_version":
                       "6.8.0", "minimum_index_compatibility_version": "6.0.0-beta1"},
           "tagline": "You Know, for Search"}
NODES = {"_nodes": {"total": 1, "successful": 1, "failed": 0}, "cluster_name": "capture",
         "nodes": {}}
DELETED = {"took": 0, "timed_out": False, "total": 0, "deleted": 0, "batches": 0,
           "version_conflicts": 0, "noops": 0, "retries": {"bulk": 0, "search": 0},
           "throttled_millis": 0, "requests_per_second": -1.0, "throttled_until_millis": 0,
           "failures": []}


def bulk_answer(body: bytes) -> dict:
    """ES 7's ``_bulk`` answer for ``body`` (NDJSON): every action
    succeeded (``created`` / ``deleted``)."""
    items = []
    lines = [line for line in body.split(b"\n") if line.strip()]
    at = 0
    while at < len(lines):
        action = json.loads(lines[at])
        [(kind, meta)] = action.items()
        at += 1 if kind == "delete" else 2
        status, result = (200, "deleted") if kind == "delete" else (201, "created")
        items.append({kind: {"_index": meta.get("_index"), "_type": "_doc",
                             "_id": meta.get("_id", f"auto-{at}"), "_version": 1,
                             "result": result, "_shards": {"total": 1, "successful": 1,
                                                           "failed": 0},
                             "_seq_no": at, "_primary_term": 1, "status": status}})
    return {"took": 1, "errors": False, "items": items}


def serve(out_path: str, port_file: str) -> None:
    """Run the server (module text) until SIGTERM/SIGINT."""
    from twisted.internet import reactor
    from twisted.web import resource, server

    out = open(out_path, "ab")

    class Root(resource.Resource):
        isLeaf = True

        def render(self, request):
            length = int(request.getHeader(b"content-length") or 0)
            request.setHeader(b"content-type", b"application/json; charset=UTF-8")
            if length > MAX_BODY:
                request.setResponseCode(413)
                return b"{}"
            body = request.content.read(MAX_BODY + 1)
            method, path = request.method.decode(), request.uri.decode()
            out.write(json.dumps({"method": method, "path": path,
                                  "body": body.decode("utf-8", "replace")}).encode() + b"\n")
            out.flush()
            bare = path.split("?", 1)[0]
            if method == "GET" and bare in ("", "/"):
                answer = VERSION
            elif method == "GET" and bare == "/_nodes":
                answer = NODES
            elif method in ("POST", "PUT") and bare == "/_bulk":
                answer = bulk_answer(body)
            elif method == "POST" and bare.endswith("/_delete_by_query"):
                answer = DELETED
            else:
                request.setResponseCode(404)
                answer = {"error": {"type": "unknown", "reason": f"{method} {bare}"},
                          "status": 404}
            return json.dumps(answer).encode()

    port = reactor.listenTCP(0, server.Site(Root()), interface="127.0.0.1")
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port.getHost().port))
    os.replace(port_file + ".tmp", port_file)
    reactor.run()


class Capture:
    """The capture server in a subprocess: ``.url`` (``http://127.0.0.1:P/``),
    ``.requests()`` (every recorded request), ``.stop()``."""

    def __init__(self, directory: str, timeout: float = 20) -> None:
        os.makedirs(directory, exist_ok=True)
        self.out = os.path.join(directory, "requests.jsonl")
        port_file = os.path.join(directory, "port")
        tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, PYTHONPATH=tests + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.log = open(os.path.join(directory, "capture.log"), "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "kit.es_capture", self.out,
                                      port_file], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + timeout
        while not os.path.exists(port_file):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError(f"the capture server did not start: {directory}")
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read())
        self.url = f"http://127.0.0.1:{self.port}/"

    def requests(self) -> list:
        """Every request so far: ``[{"method", "path", "body"}]``."""
        if not os.path.exists(self.out):
            return []
        with open(self.out, "rb") as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self, timeout: float = 10) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


#: fc writes a NaN double as ``nan`` / ``-nan``, which is not JSON
_NAN = re.compile(r"(?<=[:\[,])-?nan(?=[,\]}])")


def parse_document(line: str):
    """A captured document line as JSON, fc's ``-nan`` / ``nan`` read as
    float NaN."""
    return json.loads(_NAN.sub("NaN", line))


def bulk_actions(requests: list) -> list:
    """The actions of every ``_bulk`` request, in order:
    ``[(kind, meta, document or None)]`` (kind ``index``, ``create`` or
    ``delete``)."""
    actions = []
    for req in requests:
        if req["method"] not in ("POST", "PUT") or req["path"].split("?")[0] != "/_bulk":
            continue
        lines = [line for line in req["body"].split("\n") if line.strip()]
        at = 0
        while at < len(lines):
            [(kind, meta)] = json.loads(lines[at]).items()
            if kind == "delete":
                actions.append((kind, meta, None))
                at += 1
            else:
                actions.append((kind, meta, parse_document(lines[at + 1])))
                at += 2
    return actions


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
