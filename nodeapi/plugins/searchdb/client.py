"""HTTP client of the search database (treq over its own connection pool).

``GET /`` tells the server flavour
(:class:`~nodeapi.plugins.searchdb.flavors.ServerInfo`), which decides paths
and templates (docs/wire-contract.rst section 8).

Style (treq and txacme): own ``HTTPConnectionPool`` and
``Agent(connectTimeout=...)``, every request plus its body wrapped in
``Deferred.addTimeout(t, clock)``, no automatic retry (the plugin retries
with backoff), cached connections closed on :meth:`SearchDBClient.close`.
Credentials (``searchdb-basic-auth`` or ``user:pass@`` in the URL) are sent
as an ``Authorization: Basic`` header and never appear in a log line or an
error message: :attr:`SearchDBClient.safe_url` is the URL without them.
"""

import base64
from typing import Any, Optional
from urllib.parse import unquote

import orjson
import treq
from hyperlink import URL
from treq.client import HTTPClient
from twisted.internet.defer import CancelledError, inlineCallbacks, succeed
from twisted.logger import Logger
from twisted.web.client import Agent, HTTPConnectionPool

from nodeapi.errors import HistoryError
from nodeapi.plugins.searchdb.flavors import ServerInfo



class _QuietClientFactory(HTTPConnectionPool._factory):
    """Twisted's HTTP/1.1 client factory without its "Starting factory" /
    "Stopping factory" lines (one pair per connection)."""

    noisy = False


class QuietConnectionPool(HTTPConnectionPool):
    """An ``HTTPConnectionPool`` whose connections log nothing when they
    open and close (an idle node opened and closed dozens a minute)."""

    _factory = _QuietClientFactory


class SearchDBError(HistoryError):
    """The search database did not answer as expected.

    :ivar status: the HTTP status, or None when no answer came (connection
        refused, reset, timeout).
    :ivar reason: a short text (server's error type and reason, or the
        transport failure), never containing credentials.
    """

    def __init__(self, message: str, status: Optional[int] = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason or message


def parse_server_info(answer: Any) -> ServerInfo:
    """ServerInfo from the JSON of ``GET /``; raises SearchDBError if it has
    no ``version.number``."""
    version = answer.get("version") if isinstance(answer, dict) else None
    number = version.get("number") if isinstance(version, dict) else None
    if not isinstance(number, str) or not number[:1].isdigit():
        raise SearchDBError("GET / did not report version.number", 200,
                            "not a search database answer")
    dist = str(version.get("distribution") or "elasticsearch").lower()
    return ServerInfo(number, dist, int(number.split(".")[0]))


def split_userinfo(url: str) -> tuple:
    """``"http://user:pass@host:9200/"`` -> ``("user:pass", "http://host:9200/")``;
    ``("", url)`` without userinfo.  The userinfo is everything before the
    last ``@`` of the authority (which ends at the first ``/ ? #``, as
    ``urllib.parse.urlsplit`` and :func:`nodeapi.plugins.values.parse_url`
    read it), so a password holding ``@`` never leaks into the host part,
    nor into :attr:`SearchDBClient.safe_url`."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = min([len(rest)] + [pos for pos in map(rest.find, "/?#") if pos != -1])
    authority = rest[:end]
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return "", url
    return userinfo, f"{scheme}{sep}{host}{rest[end:]}"


def _error_reason(status: int, body: bytes) -> str:
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body[:200].decode("utf-8", "replace").strip() or f"HTTP {status}"
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        return f"{err.get('type', 'error')}: {err.get('reason', '')}"[:300]
    if err:
        return str(err)[:300]
    return f"HTTP {status}"


class SearchDBClient:
    """JSON over HTTP to the search database.

    :param node_url: ``searchdb-node-url`` (e.g. ``http://localhost:9200/``);
        a ``user:pass@`` part is used as credentials and removed.
    :param basic_auth: ``searchdb-basic-auth`` ``user:password`` ("" = none).
    :param reactor: the reactor (``IReactorTCP`` for the own pool, and the
        clock of the timeouts); a ``Clock`` will do with ``http_client``.
    :param connect_timeout: seconds for a TCP connection.
    :param request_timeout: seconds for a whole request including its body.
    :param http_client: a treq ``HTTPClient`` to use instead of one over the
        own pool (tests pass ``treq.testing.StubTreq``).
    """

    log = Logger()

    def __init__(self, node_url: str, basic_auth: str, reactor: Any, *,
                 connect_timeout: float = 10.0, request_timeout: float = 60.0,
                 http_client: Any = None) -> None:
        self.reactor = reactor
        userinfo, bare = split_userinfo(node_url if "://" in node_url else "http://" + node_url)
        if userinfo and not basic_auth:
            basic_auth = unquote(userinfo)
        try:
            url = URL.from_text(bare)
        except ValueError:  # hyperlink's message may quote the URL: never shown
            raise ValueError(f"{bare!r} is not a usable search database URL") from None
        self.base = url.to_text().rstrip("/")
        self.safe_url = self.base + "/"
        self._headers = {b"Content-Type": [b"application/json"]}
        if basic_auth:
            token = base64.b64encode(basic_auth.encode("utf-8")).decode("ascii")
            self._headers[b"Authorization"] = [f"Basic {token}".encode("ascii")]
        self.request_timeout = request_timeout
        self._pool = None
        if http_client is None:
            self._pool = QuietConnectionPool(reactor, persistent=True)
            self._pool.maxPersistentPerHost = 2
            agent = Agent(reactor, connectTimeout=connect_timeout, pool=self._pool)
            http_client = HTTPClient(agent)
        self._http = http_client
        self.info: Optional[ServerInfo] = None

    @property
    def has_auth(self) -> bool:
        """True when the node URL carried ``user:password`` and requests
        send an ``Authorization: Basic`` header (the value is never
        logged)."""
        return b"Authorization" in self._headers

    @inlineCallbacks
    def request(self, method: str, path: str, body: Any = None,
                content_type: bytes = b"application/json", ok=(200, 201)):
        """``method path`` with a JSON (or raw bytes) body; returns
        ``(status, body bytes)``.  Raises :class:`SearchDBError` for no
        answer or a status not in ``ok``."""
        headers = dict(self._headers)
        headers[b"Content-Type"] = [content_type]
        if body is not None and not isinstance(body, bytes):
            body = orjson.dumps(body)
        where = f"{method} {self.safe_url.rstrip('/')}{path.split('?')[0]}"
        try:
            d = self._http.request(method, self.base + path, headers=headers, data=body)
            d.addCallback(lambda resp: treq.content(resp).addCallback(
                lambda content: (resp.code, content)))
            d.addTimeout(self.request_timeout, self.reactor)
            status, content = yield d
        except (SearchDBError, CancelledError):
            raise
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}".strip()
            raise SearchDBError(f"{where}: no answer ({reason})", None, reason) from None
        if status not in ok:
            reason = _error_reason(status, content)
            raise SearchDBError(f"{where}: HTTP {status} {reason}", status, reason)
        return (status, content)

    @inlineCallbacks
    def request_json(self, method: str, path: str, body: Any = None, ok=(200, 201)):
        """Like :meth:`request`; the Deferred fires with the decoded JSON
        answer (``{}`` for an empty body) or fails with
        :class:`SearchDBError` (a status not in ``ok``, or an answer that
        is not JSON) or a connection error."""
        status, content = yield self.request(method, path, body, ok=ok)
        try:
            return orjson.loads(content) if content else {}
        except orjson.JSONDecodeError:
            raise SearchDBError(f"{method} {path}: answer is not JSON", status,
                                "answer is not JSON") from None

    @inlineCallbacks
    def detect(self):
        """``GET /`` -> :class:`ServerInfo` (also kept in :attr:`info`)."""
        answer = yield self.request_json("GET", "/")
        self.info = parse_server_info(answer)
        return self.info

    @inlineCallbacks
    def ensure_template(self, name: str, template: dict):
        """Install ``template`` as ``name`` unless a template of that name
        exists.  Returns True if it was installed now."""
        path = self.info.template_path + name
        status, _content = yield self.request("GET", path, ok=(200, 404))
        if status == 200:
            return False
        yield self.request_json("PUT", path, template)
        return True

    def bulk(self, body: bytes):
        """``POST /_bulk`` with an NDJSON body; returns the decoded answer
        (``{"errors", "items": [{"create": {"_id", "status", ...}}]}``)."""
        d = self.request("POST", "/_bulk", body, content_type=b"application/x-ndjson", ok=(200,))
        return d.addCallback(lambda sc: _decode_bulk(sc[1]))

    def search(self, prefix: str, query: dict):
        """``POST /<prefix>*/[data/]_search``; returns the decoded answer."""
        return self.request_json("POST", self.info.search_path(prefix, "_search"), query)

    def count(self, prefix: str, query: Optional[dict] = None):
        """``POST /<prefix>*/[data/]_count``: the Deferred fires with the
        number (int) of documents matching ``query`` (a query DSL dict;
        None: all) or fails like :meth:`request_json`."""
        body = {"query": query} if query is not None else None
        d = self.request_json("POST", self.info.search_path(prefix, "_count"), body)
        return d.addCallback(lambda answer: int(answer.get("count", 0)))

    def close(self):
        """Close the pool's cached keep-alive connections; the Deferred
        fires with None once they are closed (at once without an own
        pool)."""
        if self._pool is not None:
            return self._pool.closeCachedConnections()
        return succeed(None)


def _decode_bulk(content: bytes) -> dict:
    try:
        answer = orjson.loads(content)
    except orjson.JSONDecodeError:
        raise SearchDBError("POST /_bulk: answer is not JSON", 200, "answer is not JSON") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("items"), list):
        raise SearchDBError("POST /_bulk: answer has no items", 200, "answer has no items")
    return answer
