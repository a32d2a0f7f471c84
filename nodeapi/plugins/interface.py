"""What a plugin of ``twistd nodeapi`` declares and what it builds.

A plugin (:class:`IPlugin`) has a name (its ``--plugins`` word), option
rows (:class:`Option`, bitshares-core ``plugin_set_program_options``) and
a ``build(context)`` (``plugin_initialize``) making its parts
(:class:`PluginParts`) from the parsed option values of a
:class:`PluginContext`.  :func:`nodeapi.modes.node.build_plugins` registers the
parts' block consumers with the chain, attaches their service under the
plugin's name and hands their API part to the API sets as
``node.plugins[name]`` (:class:`nodeapi.node.Node`).

Reference: libraries/app/include/graphene/app/plugin.hpp
(``abstract_plugin``) and libraries/plugins/*/ in bitshares-core.
"""

from typing import Any, Callable, Mapping, MutableMapping, Optional

import attr
from zope.interface import Attribute, Interface, implementer

#: :attr:`Option.kind` values.
SINGLE, FLAG, MULTI = "single", "flag", "multi"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Option:
    """One option row of a plugin (or of the node).

    :ivar name: the option name, ``--name`` and ``name = value`` in the INI
        file (graphene's or the specification's spelling).
    :ivar parse: the value parser: raw text -> typed value (a list for a
        repeatable option); raises ``ValueError`` with the problem
        (:mod:`nodeapi.plugins.values`).
    :ivar help: the ``--help`` text.
    :ivar default: the default as text (single-valued options only).
    :ivar kind: :data:`SINGLE`, :data:`FLAG` (true/false, switched on by
        ``--name``) or :data:`MULTI` (repeatable).
    """

    name: str
    parse: Callable[[str], Any]
    help: str
    default: str = ""
    kind: str = SINGLE


@attr.s(frozen=True, slots=True, auto_attribs=True)
class PluginContext:
    """What a plugin builds itself from.

    :ivar values: the parsed option values by option name (the node's
        :class:`nodeapi.config.Options` after ``parseOptions``).
    :ivar chain: the :class:`nodeapi.chain.chain.Chain`, or None (indexer
        mode: the blocks come from an upstream node).
    :ivar data_dir: the node's absolute data directory.
    :ivar reactor: the reactor every part uses.
    :ivar genesis: the loaded :class:`nodeapi.chain.genesis.Genesis`.
    :ivar asset_lookup: without a chain, ``fn(asset_id) -> (symbol,
        precision) | None`` (the upstream's), else None.
    """

    values: Mapping[str, Any]
    chain: Any
    data_dir: str
    reactor: Any
    genesis: Any = None
    asset_lookup: Optional[Callable[[str], Optional[tuple]]] = None


@attr.s(frozen=True, slots=True, auto_attribs=True)
class PluginParts:
    """What a plugin's ``build`` returns.

    :ivar api: what the API sets read as ``node.plugins[name]`` (None: the
        plugin serves no API, e.g. searchdb in ``only_save`` mode).
    :ivar consumers: the ``IBlockConsumer`` s to register with
        ``chain.add_consumer``, in this order.
    :ivar service: the Twisted service to attach under the plugin's name
        (started after the replay), or None.
    """

    api: Any = None
    consumers: tuple = ()
    service: Any = None


class IPlugin(Interface):
    """A plugin: graphene's ``abstract_plugin`` (module text)."""

    name = Attribute("The ``--plugins`` name (``market_history``).")
    options = Attribute("A tuple of :class:`Option` rows, in ``--help`` order.")
    aliases = Attribute("``{bitshares-core name: option name}``: the reference plugin's "
                        "names of its options an INI file may use.")
    reference_names = Attribute("bitshares-core names of the plugin ``--plugins`` reads as "
                                "its name (``elasticsearch`` for ``searchdb``).")
    default = Attribute("Whether the default ``--plugins`` enables it.")

    def check(values: MutableMapping, warnings: list) -> None:
        """Once every option is parsed, whether the plugin is enabled or
        not: complete the values whose default depends on other options,
        append lines to log at startup to ``warnings``; raises
        ``ValueError`` with the message for a combination that cannot
        work (its own options, or with the node's: ``--plugins``,
        ``--upstream``)."""

    def build(context: PluginContext) -> PluginParts:
        """The plugin's parts for ``context``; raises
        :class:`nodeapi.errors.ConfigError` for a startup problem."""


def no_check(values: MutableMapping, warnings: list) -> None:
    """The :meth:`IPlugin.check` of a plugin with nothing to check."""


@implementer(IPlugin)
@attr.s(frozen=True, slots=True, auto_attribs=True)
class Plugin:
    """An :class:`IPlugin` from its name, option rows and build function.

    :ivar build: ``fn(PluginContext) -> PluginParts``.
    :ivar check: ``fn(values, warnings)`` (:meth:`IPlugin.check`; default
        :func:`no_check`).
    :ivar reference_names: :attr:`IPlugin.reference_names` (default none).
    :ivar default: :attr:`IPlugin.default` (default False).
    """

    name: str
    options: tuple
    build: Callable[[PluginContext], PluginParts]
    aliases: Mapping[str, str] = attr.Factory(dict)
    check: Callable[[MutableMapping, list], None] = no_check
    reference_names: tuple = ()
    default: bool = False
