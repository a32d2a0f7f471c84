"""``twistd nodeapi``: build the node's service tree from the options.

The plugin file (``twisted/plugins/nodeapi_plugin.py``) only names this
module; :class:`Options` comes from :mod:`nodeapi.config` and
:func:`makeService` wires the parts along the data flow
block -> chain -> plugins -> bulk -> search database, resolving the reactor
once and handing it to every part:

* the block log in ``--data-dir`` (opened here, so a corrupt log stops
  startup before the reactor runs, naming the file and offset);
* the :class:`~nodeapi.chain.chain.Chain` over the genesis the options
  loaded;
* the plugins of ``--plugins`` (:func:`_build_plugins`, in the order of
  :data:`nodeapi.config_plugins.PLUGINS`): each one's ``build`` gives its
  block consumers, its service and the part the API sets read as
  ``node.plugins[name]``; then the metrics and the checkpoints as the last
  block consumers;
* the service tree: a :class:`~nodeapi.service.NodeService` whose children,
  in start order, are the plugins' services (``searchdb``,
  ``searchdb-objects``, ``witness``), ``peers``, ``checkpoints``, ``rpc``
  (the RPC Site on ``--rpc-endpoint``), ``metrics`` (with
  ``--metrics-endpoint``) and ``devnet`` (with ``--devnet``); the ports bind
  in ``privilegedStartService``, everything starts after the replay
  (:mod:`nodeapi.service`).

With ``--upstream`` (gateway mode, :func:`_make_gateway`, one or more)
there is no block log and no chain: login and api-access are local, every
other API set is forwarded to the upstreams (:mod:`nodeapi.gateway`), but
with the ``searchdb`` plugin the history set, served from the search
database that an :class:`~nodeapi.peers.upstream.UpstreamService`
following one healthy upstream fills.

A bad option or file is reported as one line ``nodeapi: <message>`` on
stderr and exit status 78 (:data:`EX_CONFIG`, ``SystemExit``), never a
traceback nor the usage text (:class:`Options`): the shipped systemd unit
does not restart a node whose configuration is wrong
(``RestartPreventExitStatus=78``).  Without ``--config`` the data dir's
``config.ini`` is read, and written with every option commented out when
missing (:mod:`nodeapi.config_file`).  Under systemd the node tells the
service manager when it is ready and when it stops (``NOTIFY_SOCKET``)
and logs without twistd's timestamp when its standard output is the
journal (``JOURNAL_STREAM``; :mod:`nodeapi.service_systemd`).
The file appenders of a bitshares ``[logger.default]`` section
(:mod:`nodeapi.config_logging`) are added to the global log publisher.
"""

import difflib
import os
import re
import sys

from twisted.internet.endpoints import serverFromString
from twisted.logger import Logger

from twisted.python import usage

from nodeapi import config
from nodeapi.errors import ConfigError, StorageError

log = Logger()


#: exit status of a configuration error (sysexits.h ``EX_CONFIG``)
EX_CONFIG = 78


def config_exit(message: str) -> SystemExit:
    """Print ``nodeapi: <message>`` to stderr; the ``SystemExit`` with
    status :data:`EX_CONFIG` to raise."""
    print(f"nodeapi: {message}", file=sys.stderr, flush=True)
    return SystemExit(EX_CONFIG)


class Options(config.Options):
    """The options twistd reads (:class:`nodeapi.config.Options`): a bad
    value or file is one line ``nodeapi: <option> (FILE line N): <problem>``
    on stderr and exit status :data:`EX_CONFIG` (``SystemExit``); an
    unknown command-line option is one line naming the nearest option.
    The usage text is printed only for ``--help``.  A unit with
    ``Restart=on-failure`` and ``RestartPreventExitStatus=78`` then stops
    with that line instead of repeating it.

    Under twistd (:attr:`parent` is twistd's ``ServerOptions``) logging to
    a standard output that is the journal, the log lines leave out
    twistd's timestamp (:func:`nodeapi.service_systemd.use_journal_format`).
    """

    def parseOptions(self, options=None) -> None:
        try:
            super().parseOptions(options)
        except usage.UsageError as exc:
            raise config_exit(self._usage_problem(str(exc))) from None
        from nodeapi.service_systemd import use_journal_format

        use_journal_format(getattr(self, "parent", None), os.environ)

    def postOptions(self) -> None:
        try:
            super().postOptions()
        except usage.UsageError as exc:
            raise config_exit(str(exc)) from None

    def _usage_problem(self, problem: str) -> str:
        """getopt's ``option --x not recognized`` as ``--x: unknown option;
        did you mean --y?`` (the nearest long option); other problems as
        they are."""
        unknown = re.fullmatch(r"option (-{1,2})([^ ]+) not recognized", problem)
        if unknown is None:
            return f"{problem} (twistd nodeapi --help lists the options)"
        dashes, name = unknown.groups()
        names = [o[0] for o in self.optParameters] + [o[0] for o in self.optFlags] + [
            n[4:].replace("_", "-") for n in dir(self) if n.startswith("opt_")]
        near = difflib.get_close_matches(name.replace("_", "-"), names, n=1, cutoff=0.6)
        hint = f"did you mean --{near[0]}?" if near else "twistd nodeapi --help lists the options"
        return f"{dashes}{name}: unknown option; {hint}"


def makeService(options, reactor=None):
    """The :class:`~nodeapi.service.NodeService` for parsed ``options``,
    with every service of the node attached (module doc).

    :param reactor: the reactor every part uses (the global reactor when
        None: the only place it is imported).
    :raises SystemExit: after printing ``nodeapi: <problem>``: status
        :data:`EX_CONFIG` for a configuration error (bad api-access file,
        a ``NOTIFY_SOCKET`` that is no address), 1 for a storage error
        (unreadable or corrupt block log).
    """
    if reactor is None:
        from twisted.internet import reactor
    _log_version()
    try:
        return _make_service(options, reactor)
    except ConfigError as exc:
        raise config_exit(str(exc)) from None
    except StorageError as exc:
        raise SystemExit(f"nodeapi: {exc}") from None


def _identity(mode: str, chain_id: str, plugins) -> dict:
    """What the metrics' ``nodeapi_build_info`` and the status page say
    this process is: ``{"version", "python", "twisted", "chain_id",
    "mode", "plugins"}``."""
    import platform

    import twisted

    from nodeapi import __version__

    return {"version": __version__, "python": platform.python_version(),
            "twisted": twisted.__version__, "chain_id": chain_id, "mode": mode,
            "plugins": list(plugins)}


def _log_version() -> None:
    """The first line of the log: what runs (nodeapi, Twisted and Python
    versions, as :func:`_identity` gives them)."""
    ident = _identity("", "", ())
    log.info("nodeapi {version} (Twisted {twisted}, Python {python})",
             version=ident["version"], twisted=ident["twisted"], python=ident["python"])


def _make_service(options, reactor):
    from nodeapi.chain.blocklog import BlockLog
    from nodeapi.chain.chain import Chain
    from nodeapi.checkpoints import CheckpointService
    from nodeapi.metrics import Metrics
    from nodeapi.node import Node
    from nodeapi.peers.service import PeerService, split_seed_nodes
    from nodeapi.rpc.access import ApiAccess
    from nodeapi.service import NodeService

    if options["fork-url"] is not None and options["load-state"]:
        raise ConfigError("--fork-url and --load-state both give the devnet's start state: "
                          "choose one")
    if options["devnet"]:
        _devnet_options(options, reactor)
    elif options["load-state"]:
        raise ConfigError("--load-state needs --devnet")
    elif options["fork-url"] is not None:
        raise ConfigError("--fork-url needs --devnet")
    data_dir = options["data-dir"]
    try:
        os.makedirs(data_dir, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--data-dir {data_dir}: {exc.strerror}") from None
    new_config = getattr(options, "new_config", None)
    if new_config and not options["devnet"]:
        _write_new_config(new_config)
    notifier = _notifier()
    access = (ApiAccess.load(options["api-access"]) if options["api-access"]
              else ApiAccess.devnet_default() if options["devnet"] else ApiAccess.default())
    if options["upstream"]:
        return _make_gateway(options, reactor, data_dir, access, notifier)
    # a devnet's blocks live in a throw-away directory: no fsync per block
    block_log = BlockLog(options.block_log_path(), sync=not options["devnet"])
    block_log.open()
    chain = Chain(options.genesis, block_log, clock=reactor,
                  statistics_type=options["account-statistics-type"])
    plugins, services = _build_plugins(options, chain, data_dir, reactor)
    rpc_seeds, p2p_seeds = split_seed_nodes(options["seed-node"] + options["seed-nodes"])
    # a producing node verifies every signature, as bitshares-core's
    # (application.cpp handle_block: _is_block_producer || _force_validate)
    peers = PeerService(chain, seed_nodes=rpc_seeds, reactor=reactor,
                        max_message_size=options["max-message-size"],
                        p2p_endpoint=options["p2p-endpoint"] or None, p2p_seeds=p2p_seeds,
                        node_key_path=os.path.join(data_dir, "p2p", "node_key"),
                        peer_db_path=os.path.join(data_dir, "p2p", "peers.json"),
                        p2p_connect_to_new_peers=options["p2p-connect-to-new-peers"],
                        p2p_max_connections=options["p2p-max-connections"],
                        force_validate=options["force-validate"] or "witness" in services)
    checkpoints = CheckpointService(
        chain, os.path.join(data_dir, "checkpoints"), options["checkpoint-interval"], reactor,
        replay_blockchain=options["replay-blockchain"])
    metrics = Metrics(chain, services.get("witness"), services.get("searchdb"), peers=peers,
                      clock=reactor, health_limits=options.health_limits(),
                      checkpoints=checkpoints, data_dir=data_dir,
                      identity=_identity("node", chain.chain_id, options["plugins"]))
    chain.add_consumer(metrics)
    chain.add_consumer(checkpoints)  # last: it sees a block after every plugin
    devnet = _make_devnet(options, reactor, chain, lambda: top) if options["devnet"] else None
    node = Node(chain=chain, plugins=plugins, limits=options.api_limits(),
                api_node_info=options["api-node-info"],
                enable_subscribe_to_all=options["enable-subscribe-to-all"], peers=peers,
                options=dict(options), reactor=reactor, devnet=devnet,
                output_dir=options["api-output-dir"])
    top = NodeService(chain, block_log, reactor=reactor, node=node, checkpoints=checkpoints,
                      notifier=notifier)

    def attach(name, svc):
        svc.setName(name)
        svc.setServiceParent(top)
        return svc

    for name, svc in services.items():  # in build order (nodeapi.config_plugins)
        attach(name, svc)
    attach("peers", peers)
    attach("checkpoints", checkpoints)
    _attach_ports(options, reactor, attach, node, access, metrics,
                  routes=devnet.routes() if devnet else None)
    if devnet is not None:
        attach("devnet", devnet)
    log.info("nodeapi: chain {chain_id}, data dir {data_dir}, plugins {plugins}",
             chain_id=chain.chain_id, data_dir=data_dir, plugins=" ".join(options["plugins"]))
    return top


def _build_plugins(options, chain, data_dir, reactor) -> tuple:
    """Build the plugins of ``--plugins`` in the order of
    :data:`nodeapi.config_plugins.PLUGINS` (bitshares-core
    libraries/app/application.cpp ``initialize_plugins``): register their
    block consumers with ``chain`` and return ``({name: API part}, {name:
    service})``, both in that order."""
    from nodeapi.config_plugins import PLUGINS
    from nodeapi.plugin.interface import PluginContext

    context = PluginContext(values=options, chain=chain, data_dir=data_dir, reactor=reactor,
                            genesis=options.genesis)
    plugins, services = {}, {}
    for plugin in PLUGINS:
        if plugin.name not in options["plugins"]:
            continue
        parts = plugin.build(context)
        plugins[plugin.name] = parts.api
        for consumer in parts.consumers:
            chain.add_consumer(consumer)
        if parts.service is not None:
            services[plugin.name] = parts.service
    return plugins, services


#: bytes: the smallest largest message a gateway accepts from its upstreams
UPSTREAM_MESSAGE_SIZE = 64 * 1024 * 1024


def _write_new_config(path: str) -> None:
    """The data dir's first ``config.ini`` (:mod:`nodeapi.config_file`)."""
    from nodeapi.config_file import write_new_config

    try:
        write_new_config(path)
    except FileExistsError:
        return  # another start wrote it in between: it is read at the next start
    except OSError as exc:
        raise ConfigError(f"--data-dir: cannot write {path}: {exc.strerror}") from None
    log.info("Wrote {path}: every option commented out at its default", path=path)


def _notifier():
    """The systemd notifier of ``NOTIFY_SOCKET``, or None."""
    from nodeapi.service_systemd import Notifier

    try:
        return Notifier.from_environment(os.environ)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _make_gateway(options, reactor, data_dir, access, notifier=None):
    """Gateway mode (``--upstream``, :mod:`nodeapi.gateway`): NodeService
    without a chain; children ``upstreams`` (the
    :class:`~nodeapi.gateway.pool.UpstreamPool`), with the searchdb plugin
    ``searchdb`` and ``upstream`` (its follower of one upstream, a healthy
    one at each reconnection),
    ``rpc`` (login local, history from the search database with the
    plugin, every other set forwarded, the subscriptions merged by a
    :class:`~nodeapi.gateway.subscriptions.SubscriptionHub`) and ``metrics``
    (head figures and ``/healthz`` from the follower, else from the
    freshest upstream)."""
    from nodeapi.gateway.apis import Gateway, gateway_registry
    from nodeapi.gateway.cache import AnswerCache
    from nodeapi.gateway.figures import GatewayCollector, PoolHead
    from nodeapi.gateway.head_share import HeadShare
    from nodeapi.gateway.pool import UpstreamPool
    from nodeapi.gateway.subscriptions import SubscriptionHub
    from nodeapi.gateway.client_subscriptions import install as install_subscriptions
    from nodeapi.metrics import Metrics
    from nodeapi.node import Node
    from nodeapi.service import NodeService

    children = []  # (the services, attached in this order once NodeService is built)

    def attach(name, svc):
        svc.setName(name)
        children.append(svc)
        return svc

    addresses = options["upstream"]  # parsed node addresses
    pool = attach("upstreams", UpstreamPool(
        addresses, reactor, max_head_age=options["upstream-max-head-age"],
        chain_id=options["upstream-chain-id"] or None,
        timeout=options["upstream-timeout"], max_lag_blocks=options["upstream-max-lag-blocks"],
        # answers may be larger than the clients' requests may: a block range
        # over the limit would close the shared connection for every call on it
        max_message_size=max(options["max-message-size"], UPSTREAM_MESSAGE_SIZE)))
    searchdb = follower = history_api = None
    if "searchdb" in options["plugins"]:
        searchdb, follower = _attach_indexer(options, reactor, data_dir, attach, addresses[0],
                                             pool.choose_address)
        from nodeapi.api.history import HistoryApi

        history_api = HistoryApi
    share_seconds = options["upstream-share-seconds"]
    gateway = Gateway(pool, AnswerCache(options["upstream-cache-size"] * 1024 * 1024,
                                        clock=reactor),
                      share=HeadShare(pool, reactor, share_seconds) if share_seconds else None,
                      routes=options.upstream_routes())
    install_subscriptions(gateway, SubscriptionHub(
        pool, reactor, full_accounts_limit=options["upstream-accounts-per-connection"],
        max_connections=options["upstream-subscription-connections"],
        max_message_size=max(options["max-message-size"], UPSTREAM_MESSAGE_SIZE)))
    metrics = Metrics(None, None, searchdb, clock=reactor,
                      upstream=follower if follower is not None else PoolHead(pool),
                      health_limits=options.health_limits(), data_dir=data_dir,
                      identity=_identity("gateway", options["upstream-chain-id"] or "",
                                         options["plugins"]))
    metrics.registry.register(GatewayCollector(gateway))
    node = Node(chain=None, plugins={"searchdb": searchdb.history} if searchdb else {},
                limits=options.api_limits(), api_node_info=options["api-node-info"],
                options=dict(options), reactor=reactor,
                account_lookup=follower.account_id if follower else None, gateway=gateway)
    _attach_ports(options, reactor, attach, node, access, metrics,
                  registry=gateway_registry(history_api))
    top = NodeService(None, None, reactor=reactor, node=node, notifier=notifier)
    for svc in children:
        svc.setServiceParent(top)
    log.info("nodeapi gateway: upstreams {upstreams}, data dir {data_dir}",
             upstreams=" ".join(a.address for a in addresses), data_dir=data_dir)
    return top


def _attach_indexer(options, reactor, data_dir, attach, address, choose):
    """The searchdb plugin fed by an
    :class:`~nodeapi.peers.upstream.UpstreamService` following ``address``
    first, then at each reconnection the address ``choose()`` gives:
    ``(searchdb, follower)``."""
    from nodeapi.history.searchdb.plugin import searchdb_service
    from nodeapi.peers.upstream import UpstreamService

    searchdb = attach("searchdb", searchdb_service(
        options, None, data_dir, reactor,
        asset_lookup=lambda asset_id: follower.asset(asset_id)))  # the visitor's names
    follower = attach("upstream", UpstreamService(
        address, [searchdb] if searchdb.writes else [],
        reactor, pending=lambda: searchdb.documents_pending,
        irreversible=options["upstream-irreversible-only"],
        max_message_size=options["max-message-size"],
        state_path=os.path.join(data_dir, "indexer-state.json"),
        confirmed_block=lambda: searchdb.confirmed_block_num,
        asset_names=options["searchdb-visitor"], choose=choose))
    return searchdb, follower


def _attach_ports(options, reactor, attach, node, access, metrics, registry=None,
                  routes=None) -> None:
    """Attach ``rpc`` (the RPC Site of ``node`` on ``--rpc-endpoint``,
    ``registry``: the API sets served, default all; ``routes``: more
    resources by path) and ``metrics`` (with
    ``--metrics-endpoint``), then log the options' warnings."""
    from nodeapi.rpc.browser_guard import endpoint_host
    from nodeapi.rpc.site import rpc_site
    from nodeapi.service import ListeningService

    browser_guard = options.browser_guard()
    site = rpc_site(node, access, registry=registry,
                    max_message_size=options["max-message-size"],
                    auto_ping_interval=options["ws-auto-ping-interval"],
                    max_calls_in_flight=options["max-calls-in-flight"], metrics=metrics,
                    reactor=reactor, limits=options.rpc_limits(), routes=routes,
                    browser_guard=browser_guard, trusted_proxies=options.trusted_proxies())
    endpoint = options["rpc-endpoint"]
    if (endpoint.startswith(("tcp", "ssl")) and endpoint_host(endpoint) is None
            and browser_guard.loopback_only):
        log.warn("RPC on {endpoint} (every interface) answers only requests whose Host is "
                 "{hosts}: clients reaching this node by another name or address get HTTP 403; "
                 "list the names in --rpc-allowed-hosts (or give '*')", endpoint=endpoint,
                 hosts=", ".join(sorted(browser_guard.hosts)))
    attach("rpc", ListeningService(serverFromString(reactor, options["rpc-endpoint"]), site,
                                   options["rpc-endpoint"], "RPC (WebSocket and HTTP)",
                                   going_away=site.ws_factory.going_away))
    from twisted.logger import globalLogPublisher

    if options["metrics-endpoint"]:
        attach("metrics", ListeningService(
            serverFromString(reactor, options["metrics-endpoint"]), metrics.site(reactor),
            options["metrics-endpoint"], "Metrics, /status and /healthz", serve_early=True))
        # the status page's recent warnings and errors (bounded)
        globalLogPublisher.addObserver(metrics.recent_errors)
    logging = getattr(options, "logging", None)
    if logging is not None:
        problems: list = []
        for observer in logging.observers(problems):
            globalLogPublisher.addObserver(observer)
        for problem in problems:
            log.warn("{warning}", warning=problem)
    for warning in getattr(options, "warnings", ()):
        log.warn("{warning}", warning=warning)


# -- devnet (--devnet) ----------------------------------------------------------------


def _devnet_options(options, reactor) -> None:
    """``--devnet``: a fresh temporary data dir (removed after the reactor
    stops), no witness plugin (the devnet produces the blocks), a
    checkpoint only at stop; a warning when the RPC port, open to all
    without an api-access file, is not on a loopback address."""
    import re
    import shutil
    import tempfile

    endpoint = options["rpc-endpoint"]
    if not re.search(r"interface=(127\.|localhost|\\?:\\?:1$)", endpoint) \
            and not options["api-access"]:
        log.warn("--devnet: every API set but debug, devnet included, is open without login "
                 "on {endpoint}, not a loopback address", endpoint=endpoint)
    options["data-dir"] = tempfile.mkdtemp(prefix="nodeapi-devnet-")
    reactor.addSystemEventTrigger("after", "shutdown", shutil.rmtree, options["data-dir"], True)
    options["plugins"] = [p for p in options["plugins"] if p != "witness"]
    options["checkpoint-interval"] = 0


def _make_devnet(options, reactor, chain, top):
    """The :class:`~nodeapi.devnet.control.Devnet` service; it announces
    the RPC port's ``ws://`` URL (``top()``: the node's
    :class:`~nodeapi.service.NodeService`, made after it)."""
    from nodeapi.witness_plugin import DEV_WIF
    from nodeapi.devnet.accounts import CORE_UNIT
    from nodeapi.devnet.control import Devnet, DevnetOptions

    def url() -> str:
        host = top().getServiceNamed("rpc").port.getHost()
        return f"ws://{host.host}:{host.port}"

    return Devnet(chain, DevnetOptions(
        accounts=options["devnet-accounts"], seed=options["devnet-seed"],
        block_interval=options["block-interval"],
        load_state=os.path.abspath(options["load-state"]) if options["load-state"] else None,
        key=DEV_WIF, max_snapshots=options["devnet-max-snapshots"],
        balance=options["devnet-balance"] * CORE_UNIT, fork_url=options["fork-url"],
        fork_block=options["fork-block"], max_message_size=options["max-message-size"],
        fork_timeout=options["fork-timeout"]),
        clock=reactor,
        announce=url)
