"""What every mode shares: its identity, the API access file and systemd
notifier it starts with, and its RPC and metrics ports
(:func:`attach_ports`)."""

import os
import platform

from twisted.internet.endpoints import serverFromString
from twisted.logger import Logger, globalLogPublisher

from nodeapi.errors import ConfigError

log = Logger()


def identity(mode: str, chain_id: str, plugins) -> dict:
    """What the metrics' ``nodeapi_build_info`` and the status page say
    this process is: ``{"version", "python", "twisted", "chain_id",
    "mode", "plugins"}``."""
    import twisted

    from nodeapi import __version__

    return {"version": __version__, "python": platform.python_version(),
            "twisted": twisted.__version__, "chain_id": chain_id, "mode": mode,
            "plugins": list(plugins)}


def api_access(options):
    """The :class:`~nodeapi.rpc.access.ApiAccess` of ``--api-access``, else
    the devnet's or the default one; :class:`ConfigError` for a bad file."""
    from nodeapi.rpc.access import ApiAccess

    if options["api-access"]:
        return ApiAccess.load(options["api-access"])
    return ApiAccess.devnet_default() if options["devnet"] else ApiAccess.default()


def notifier():
    """The systemd notifier of ``NOTIFY_SOCKET``, or None; :class:`ConfigError`
    when it is no address."""
    from nodeapi.service_systemd import Notifier

    try:
        return Notifier.from_environment(os.environ)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def attach_ports(options, reactor, root, node, access, metrics, registry=None,
                 routes=None) -> None:
    """Attach to ``root`` ``rpc`` (the RPC Site of ``node`` on
    ``--rpc-endpoint``, with ``access`` (:func:`api_access`); ``registry``:
    the API sets served, default all;
    ``routes``: more resources by path) and ``metrics`` (with
    ``--metrics-endpoint``), then log the options' warnings and add the
    INI file's log appenders."""
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
    rpc = ListeningService(serverFromString(reactor, endpoint), site, endpoint,
                           "RPC (WebSocket and HTTP)", going_away=site.ws_factory.going_away)
    rpc.setName("rpc")
    rpc.setServiceParent(root)
    if options["metrics-endpoint"]:
        port = ListeningService(
            serverFromString(reactor, options["metrics-endpoint"]), metrics.site(reactor),
            options["metrics-endpoint"], "Metrics, /status and /healthz", serve_early=True)
        port.setName("metrics")
        port.setServiceParent(root)
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
