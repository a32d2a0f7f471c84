"""The ``devnet`` API set (access name ``devnet_api``): drive a devnet
(``twistd nodeapi --devnet``) from a test suite, as anvil's ``evm_*`` and
``anvil_*`` methods drive an Ethereum devnet.

Called by name like every set: ``{"method": "call", "params": ["devnet",
"snapshot", []]}``; the functions and what they do for a user: README
"Devnet"; their behaviour: :mod:`nodeapi.devnet.control`.  Refused unless
the node runs with ``--devnet`` (which grants the set to everyone on its
RPC port, every set but ``debug``) or an api-access file grants
``devnet_api``: a node without ``--devnet`` answers each function with an
error saying so.
"""

from nodeapi.api.arguments import check_public_key, output_path, require_str
from nodeapi.api.base import ApiSet, api_function
from nodeapi.api.lookup import get_account, get_asset
from nodeapi.errors import ApiError, ProtocolError
from nodeapi.protocol.times import parse_time
from nodeapi.protocol.config import CORE_ASSET

#: the most blocks one produce_blocks call makes
MAX_BLOCKS = 100_000
#: the longest advance_time, in seconds (ten years)
MAX_ADVANCE = 10 * 365 * 86400


class DevnetApi(ApiSet):
    """The devnet set; every function answers an
    :class:`~nodeapi.errors.ApiError` for bad arguments, the state
    unchanged."""

    name = "devnet"

    @property
    def devnet(self):
        """The node's :class:`~nodeapi.devnet.control.Devnet`
        (``node.devnet``).

        :raises ApiError: the node runs without ``--devnet``."""
        devnet = getattr(self.node, "devnet", None)
        if devnet is None:
            raise ApiError("The devnet API needs a node started with --devnet")
        return devnet

    @staticmethod
    def _bounded(value: int, low: int, high: int, what: str) -> int:
        if not low <= value <= high:
            raise ApiError(f"{what} must be {low}..{high}, got {value}")
        return value

    @api_function
    def produce_blocks(self, count: int):
        """Produce ``count`` (1..100000) blocks; a Deferred of the head number."""
        return self.devnet.produce_blocks(self._bounded(count, 1, MAX_BLOCKS, "count"))

    @api_function
    def advance_time(self, seconds: int):
        """One block ``seconds`` (1..ten years) after the head block; the
        head, as :meth:`get_head`."""
        return self.devnet.advance_time(self._bounded(seconds, 1, MAX_ADVANCE, "seconds"))

    @api_function
    def advance_to_maintenance(self):
        """The block at the next maintenance time."""
        return self.devnet.advance_to_maintenance()

    @api_function
    def get_head(self):
        """The head block and the devnet's clock
        (:meth:`nodeapi.devnet.control.Devnet.head`: ``{"head_block_number",
        "head_block_id", "time", "offset", "clock", "next_block_time",
        "automine"}``)."""
        return self.devnet.head()

    @api_function
    def increase_time(self, seconds: int):
        """Move the devnet's clock ``seconds`` (1..ten years) on, no block;
        the head, as :meth:`get_head`."""
        return self.devnet.increase_time(self._bounded(seconds, 1, MAX_ADVANCE, "seconds"))

    @api_function
    def set_next_block_time(self, when):
        """Stamp the next block at ``when`` (ISO text or seconds); the time."""
        if isinstance(when, str):
            try:
                when = parse_time(when)
            except ProtocolError:
                raise ApiError(f"time must be ISO text (2026-01-01T00:00:00) or seconds, "
                               f"got {when!r}") from None
        if isinstance(when, bool) or not isinstance(when, int):
            raise ApiError(f"time must be ISO text or seconds, got {when!r}")
        devnet = self.devnet
        return devnet.set_next_block_time(
            self._bounded(when, 1, devnet.chain.head_block_time + MAX_ADVANCE, "time"))

    @api_function
    def set_automine(self, enabled):
        """Automine on (true) or off (false)."""
        if not isinstance(enabled, bool):
            raise ApiError(f"enabled must be true or false, got {enabled!r}")
        return self.devnet.set_automine(enabled)

    @api_function
    def set_confirming_blocks(self, enabled):
        """Automine's blocks followed by an empty one (true) or not (false)."""
        if not isinstance(enabled, bool):
            raise ApiError(f"enabled must be true or false, got {enabled!r}")
        return self.devnet.set_confirming_blocks(enabled)

    @api_function
    def set_interval_mining(self, seconds: int):
        """A block every ``seconds`` (0..86400; 0: no timer)."""
        return self.devnet.set_interval_mining(self._bounded(seconds, 0, 86400, "seconds"))

    @api_function
    def pending_transactions(self):
        """The accepted transactions not in a block yet: ``[{"id",
        "transaction"}]``."""
        return self.devnet.pending_transactions()

    @api_function
    def drop_transaction(self, trx_id):
        """Drop a pending transaction by id (40 hex digits); the ids dropped."""
        trx_id = require_str(trx_id, "trx_id").lower()
        if len(trx_id) != 40 or any(c not in "0123456789abcdef" for c in trx_id):
            raise ApiError(f"trx_id must be 40 hex digits, got {trx_id!r}")
        return self.devnet.drop_transaction(trx_id)

    @api_function
    def impersonate_account(self, account):
        """Accept transactions needing only the account's (name or id)
        authority without its signatures; the impersonated account ids."""
        devnet = self.devnet
        return devnet.impersonate_account(
            get_account(devnet.chain.state, require_str(account, "account"))["id"])

    @api_function
    def stop_impersonating_account(self, account):
        """Require the account's signatures again (name or id); the
        impersonated account ids."""
        devnet = self.devnet
        return devnet.stop_impersonating_account(
            get_account(devnet.chain.state, require_str(account, "account"))["id"])

    @api_function
    def snapshot(self):
        """Capture the whole node state; its id."""
        return self.devnet.snapshot()

    @api_function
    def revert(self, snapshot_id: int):
        """Put the node back to a snapshot (dropping it and later ones); true."""
        return self.devnet.revert(snapshot_id)

    @api_function
    def get_accounts(self):
        """The ready accounts of the start (name, id, wif, public_key,
        balance)."""
        devnet = self.devnet
        return [a.as_dict(devnet.chain) for a in devnet.accounts]

    @api_function
    def set_balance(self, account, amount):
        """Set ``account``'s (name or id) balance to ``amount``: core
        satoshis, or ``{"amount", "asset_id"}``; the balance ``{"amount",
        "asset_id"}``."""
        devnet = self.devnet
        state = devnet.chain.state
        account_id = get_account(state, require_str(account, "account"))["id"]
        if isinstance(amount, dict):
            asset_id = get_asset(state, require_str(amount.get("asset_id"), "asset_id"))["id"]
            amount = amount.get("amount")
        else:
            asset_id = CORE_ASSET
        return devnet.set_balance(account_id, asset_id, _satoshis(amount))

    @api_function
    def create_account(self, name, public_key, amount: int = 0):
        """Register and fund an account by the faucet: ``{"name", "id",
        "public_key"}``; every argument checked before anything changes, the registration
        and the transfer one transaction."""
        devnet = self.devnet
        name = require_str(name, "name")
        check_public_key(public_key, devnet.chain.address_prefix)
        amount = _satoshis(amount)  # its range: Devnet.create_account
        if name in devnet.chain.state.account_by_name:
            raise ApiError(f"Account {name!r} already exists")
        return devnet.create_account(name, public_key, amount)

    @api_function
    def dump_state(self, name=None):
        """Without ``name`` the state as text (what ``--load-state`` reads;
        over WebSocket the reply must fit ``--max-message-size``); with it
        the head number, the state written to the file ``name`` (a plain
        file name) of the operator's ``--api-output-dir``, refused without
        one: no path comes from RPC."""
        devnet = self.devnet
        if name is None:
            return devnet.dump_text()
        path = output_path(self.node.output_dir, name, "name")
        try:
            return devnet.dump_state(path)
        except (OSError, ValueError) as exc:
            raise ApiError(f"Cannot write {name} in --api-output-dir: "
                           f"{getattr(exc, 'strerror', None) or exc}") from None


def _satoshis(amount, high: int | None = None) -> int:
    """An amount argument in satoshis: an integer (or a string of digits)
    0..``high`` (None: no bound here), else :class:`ApiError`."""
    if isinstance(amount, str) and amount.isascii() and amount.isdigit():
        amount = int(amount)
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0 \
            or (high is not None and amount > high):
        bound = f" (at most {high})" if high is not None else ""
        raise ApiError(f"amount must be a non-negative integer of satoshis{bound}, "
                       f"got {amount!r}")
    return amount
