"""API sets over a real Chain with a session that records notices
(the Session contract of nodeapi.api.base)."""

from bitsharesbase import operations

from nodeapi.api.answers import ApiAnswers
from nodeapi.api.base import Session
from nodeapi.api.database import DatabaseApi
from nodeapi.node import Node

from kit.chain import asset_options, issue, produce, transfer_op, with_fee
from kit.signing import sign


class RecordingSession(Session):
    """The Session contract of nodeapi.api.base, recording notices as
    ``(callback_id, payload)`` in ``notices``."""

    def __init__(self, websocket=True):
        self.websocket = websocket
        self.notices = []
        self._closers = []

    def send_notice(self, callback_id, payload):
        self.notices.append((callback_id, payload))

    def on_close(self, fn):
        self._closers.append(fn)

    def close(self):
        for fn in self._closers:
            fn()


def make_api(chain, cls=DatabaseApi, websocket=True, **node_args):
    """(``cls`` over a Node of ``chain``, its RecordingSession)."""
    session = RecordingSession(websocket)
    node_args.setdefault("api_answers", ApiAnswers(check=True))
    return cls(Node(chain=chain, **node_args), session), session


def create_gold(chain):
    """init0 creates GOLD 1.3.1 (precision 3, 1 core : 2 GOLD), issues 5000
    to init1, funds its fee pool with 10**8 and sends init1 10**8 core;
    one block."""
    op, _ = with_fee(chain, operations.Asset_create, issuer="1.2.6", symbol="GOLD",
                     precision=3, common_options=asset_options(quote=2, max_market_fee=0),
                     is_prediction_market=False, extensions=[])
    chain.push_transaction(sign(chain, [op]))
    issue(chain, "1.3.1", 5000)
    pool, _ = with_fee(chain, operations.Asset_fund_fee_pool, from_account="1.2.6",
                       asset_id="1.3.1", amount=10 ** 8, extensions=[])
    chain.push_transaction(sign(chain, [pool]))
    chain.push_transaction(sign(chain, [transfer_op(10 ** 8)]))
    produce(chain)
