"""The python-bitshares story of the e2e suite, run synchronously in the
test thread against a ``twistd -n nodeapi`` daemon.

Over ``ws://bytemaster:supersecret@127.0.0.1:PORT`` (python-bitshares'
websocket client does not send URL credentials, so ``rpcuser`` /
``rpcpassword`` are given too, which makes it call ``login``) and over
``http://bytemaster:supersecret@127.0.0.1:PORT`` (requests sends the URL
userinfo as HTTP Basic), with ``blocking="head"`` so every broadcast is
``broadcast_transaction_synchronous`` and answers with its block number and
position.  The operations, in chain order (``1.11.M``):

====  =========================================  ====================
M     operation                                  client
====  =========================================  ====================
0     balance_claim 1.15.0 into init0 (37)       ws
1     account_create e2e-alice by init0 (5)      ws
2     account_create e2e-bob by init0 (5)        ws
3     transfer init0 -> alice 1000 TEST, memo    ws
4     transfer init0 -> bob 500 TEST, memo       ws
5     transfer alice -> bob 100 TEST, memo       http
6     asset_create EECOIN by init0 (10)          ws
7     asset_issue 250 EECOIN to alice, memo (14) ws
====  =========================================  ====================
"""

from dataclasses import dataclass, field

from kit.keys import DEV_PUB, DEV_WIF


GENESIS_BALANCE = 1000000000000000
ALICE, BOB, COIN = "e2e-alice", "e2e-bob", "EECOIN"
MEMOS = {3: "welcome alice", 4: "welcome bob", 5: "from alice over http",
         7: "freshly issued"}


def keys(name: str) -> dict:
    """Deterministic WIFs and public keys of a test account, by role
    (owner, active, memo), derived like the reference wallet's password
    keys."""
    from bitsharesbase.account import PasswordKey

    out = {}
    for role in ("owner", "active", "memo"):
        priv = PasswordKey(name, "e2e password of " + name, role=role).get_private_key()
        out[role] = (str(priv), format(priv.pubkey, "TEST"))
    return out


@dataclass
class Story:
    """What the clients did: ``results[M]`` is the synchronous broadcast
    answer of operation ``1.11.M`` (``id``, ``block_num``, ``trx_num``,
    ``trx``); ``ids`` maps names to object ids read back."""

    port: int
    results: list = field(default_factory=list)
    ids: dict = field(default_factory=dict)
    ws_login: bool = False

    def fee(self, m: int) -> int:
        """Fee paid by operation ``1.11.m``, core satoshis."""
        fee = self.results[m]["operations"][0][1]["fee"]
        assert fee["asset_id"] == "1.3.0"
        return int(fee["amount"])

    def op(self, m: int) -> list:
        return self.results[m]["operations"][0]


def client(port: int, scheme: str, wifs):
    """A python-bitshares ``BitShares`` logged in as bytemaster."""
    from bitshares import BitShares

    url = f"{scheme}://bytemaster:supersecret@127.0.0.1:{port}"
    return BitShares(node=url, keys=list(wifs), num_retries=0, blocking="head",
                     rpcuser="bytemaster", rpcpassword="supersecret")


def run_story(port: int) -> Story:
    """Broadcast the eight operations of the module table and return the
    :class:`Story`; raises what python-bitshares raises on any failure."""
    from bitshares.account import Account
    from bitshares.asset import Asset
    from bitsharesbase import operations

    alice, bob = keys(ALICE), keys(BOB)
    story = Story(port)
    ws = client(port, "ws", [DEV_WIF, alice["memo"][0], bob["memo"][0]])
    story.ws_login = ws.rpc.login("bytemaster", "supersecret", api_id=1)
    res = story.results

    claim = operations.Balance_claim(**{
        "fee": {"amount": 0, "asset_id": "1.3.0"}, "deposit_to_account": "1.2.6",
        "balance_to_claim": "1.15.0", "balance_owner_key": DEV_PUB,
        "total_claimed": {"amount": GENESIS_BALANCE, "asset_id": "1.3.0"}, "prefix": "TEST"})
    res.append(ws.finalizeOp(claim, "init0", "active"))
    for name, k in ((ALICE, alice), (BOB, bob)):
        res.append(ws.create_account(name, registrar="init0", referrer="init0",
                                     owner_key=k["owner"][1], active_key=k["active"][1],
                                     memo_key=k["memo"][1]))
    res.append(ws.transfer(ALICE, 1000, "TEST", memo=MEMOS[3], account="init0"))
    res.append(ws.transfer(BOB, 500, "TEST", memo=MEMOS[4], account="init0"))

    http = client(port, "http", [alice["active"][0], alice["memo"][0], bob["memo"][0]])
    res.append(http.transfer(BOB, 100, "TEST", memo=MEMOS[5], account=ALICE))

    res.append(ws.create_asset(COIN, 3, 1000000, description="e2e coin", account="init0"))
    coin = Asset(COIN, blockchain_instance=ws)
    res.append(coin.issue(250, ALICE, memo=MEMOS[7]))

    story.ids = {"init0": "1.2.6", ALICE: Account(ALICE, blockchain_instance=ws)["id"],
                 BOB: Account(BOB, blockchain_instance=http)["id"], COIN: coin["id"]}
    return story
