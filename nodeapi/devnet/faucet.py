"""The devnet's faucet on the RPC port: ``POST /api/v1/accounts``, the
BitShares faucet's registration call, so a wallet's "create account" flow
works against a devnet unchanged.

Request (the faucet's form, as bitshares-ui and the reference faucets send
it)::

    {"account": {"name": "alice", "owner_key": "TEST...", "active_key": "TEST...",
                 "memo_key": "TEST...", "refcode": null, "referrer": null}}

Success: HTTP 201 and ``{"account": {"name", "id", "owner_key",
"active_key", "memo_key", "referrer"}}``; the account is registered by the
faucet ``init0`` (also its referrer unless ``referrer`` names a lifetime
member) and sent :data:`FAUCET_AMOUNT`, in blocks produced at once.
Failure: HTTP 400 and ``{"error": {"base": ["<message>"]}}`` (the form
wallets read ``error.base[0]`` from), nothing registered; another method
than POST and OPTIONS: HTTP 405 with the same form.  CORS is answered
(``Access-Control-Allow-Origin: *``, preflight answered) for the origins
the RPC port allows (``--rpc-allowed-origins``: a page of another origin
is refused before it gets here), as a browser wallet calls it.  Each
request counts as one RPC call against the per-address limits
(``--max-calls-per-second-per-ip``) and the ``*`` entry's (the RPC site
charges it, :mod:`nodeapi.rpc.site`).
"""

import orjson
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET

from nodeapi.chain.remote import NotHereYet, call_loading
from nodeapi.errors import NodeAPIError
from nodeapi.protocol.keys import public_key_bytes

#: the path served
FAUCET_PATH = b"/api/v1/accounts"
#: core satoshis each faucet account gets (10,000 TEST)
FAUCET_AMOUNT = 10_000 * 100_000


class FaucetResource(Resource):
    """``POST /api/v1/accounts`` of ``devnet`` (a
    :class:`nodeapi.devnet.control.Devnet`)."""

    isLeaf = True
    log = Logger()

    def __init__(self, devnet) -> None:
        super().__init__()
        self.devnet = devnet

    def _headers(self, request) -> None:
        request.setHeader(b"access-control-allow-origin", b"*")
        request.setHeader(b"access-control-allow-methods", b"POST, OPTIONS")
        request.setHeader(b"access-control-allow-headers", b"content-type, accept")
        request.setHeader(b"content-type", b"application/json")

    def render(self, request) -> bytes:
        """POST and OPTIONS as below; any other method a JSON 405 (never
        twisted.web's HTML page)."""
        if request.method in (b"POST", b"OPTIONS"):
            return super().render(request)
        self._headers(request)
        request.setHeader(b"allow", b"POST, OPTIONS")
        request.setResponseCode(405)
        return orjson.dumps({"error": {"base": [
            f"Method {request.method.decode('latin-1')[:20]} not allowed: the faucet takes "
            f"POST {FAUCET_PATH.decode()} with {{\"account\": {{...}}}}"]}})

    def render_OPTIONS(self, request) -> bytes:
        """``Resource`` OPTIONS (a CORS preflight): 204 with the CORS headers,
        no body."""
        self._headers(request)
        request.setResponseCode(204)
        return b""

    def render_POST(self, request) -> bytes:
        """Register the account of the body (201 with it, 400 with the
        reason).  On a devnet forked lazily, what the registration needs of
        the live chain is fetched first (the answer then comes later)."""
        self._headers(request)
        body = request.content.read()
        try:
            return self._answer(request, self._register(body))
        except NotHereYet as missing:
            d = missing.fetch().addCallback(lambda _: call_loading(lambda: self._register(body)))
            d.addCallback(lambda account: self._answer(request, account))
            d.addErrback(self._failed, request)
            d.addErrback(self._internal, request)
            d.addCallback(self._write, request)
            return NOT_DONE_YET
        except (NodeAPIError, ValueError) as exc:
            return self._failed(Failure(exc), request)

    @staticmethod
    def _answer(request, account: dict) -> bytes:
        request.setResponseCode(201)
        return orjson.dumps({"account": account})

    @staticmethod
    def _failed(failure: Failure, request) -> bytes:
        """400 with the reason of a refused registration (a
        :class:`~nodeapi.errors.NodeAPIError` or ``ValueError``); other
        failures go on."""
        failure.trap(NodeAPIError, ValueError)
        request.setResponseCode(400)
        return orjson.dumps({"error": {"base": [str(failure.value)]}})

    def _internal(self, failure: Failure, request) -> bytes:
        """500 for anything else (logged)."""
        self.log.failure("Faucet registration failed", failure)
        request.setResponseCode(500)
        return orjson.dumps({"error": {"base": [str(failure.value)]}})

    @staticmethod
    def _write(body: bytes, request) -> None:
        if not request.finished and not request._disconnected:
            request.write(body)
            request.finish()

    def _register(self, body: bytes) -> dict:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ValueError("The body is not JSON: expected {\"account\": {\"name\", "
                             "\"owner_key\", \"active_key\", \"memo_key\"}}") from None
        account = doc.get("account") if isinstance(doc, dict) else None
        if not isinstance(account, dict):
            raise ValueError("Expected {\"account\": {\"name\", \"owner_key\", \"active_key\", "
                             "\"memo_key\"}}")
        chain = self.devnet.chain
        name = account.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("account.name must be an account name")
        if name in chain.state.account_by_name:
            raise ValueError(f"Account name {name!r} is already taken")
        keys = {}
        for field in ("owner_key", "active_key", "memo_key"):
            key = account.get(field, account.get("active_key"))
            try:
                public_key_bytes(key, chain.address_prefix)
            except Exception:
                raise ValueError(f"account.{field} must be a {chain.address_prefix}... public "
                                 f"key, got {key!r}") from None
            keys[field] = key
        referrer = self._referrer(account.get("referrer") or account.get("refcode"))
        made = self.devnet.create_account(name, keys["owner_key"], FAUCET_AMOUNT,
                                          active_key=keys["active_key"],
                                          memo_key=keys["memo_key"], referrer=referrer)
        return dict(made, **keys, referrer=chain.state.objects[referrer]["name"]
                    if referrer else "init0")

    def _referrer(self, name):
        """The id of a lifetime member named ``name``, else None (graphene
        account_create_evaluator: a referrer must be a member)."""
        state = self.devnet.chain.state
        oid = state.account_by_name.get(name) if isinstance(name, str) else None
        if oid and state.objects[oid]["membership_expiration_date"] \
                > self.devnet.chain.head_block_time:
            return oid
        return None
