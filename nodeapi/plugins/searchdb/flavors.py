"""Server flavours of the search database and the index template of each
(docs/wire-contract.rst section 8): ``GET /`` tells ``version.number`` and
``version.distribution``; Elasticsearch 6 uses paths and action lines with
the document type ``data`` and a legacy template with a typed mapping,
Elasticsearch 7 is typeless with a legacy ``_template``, Elasticsearch >= 8
and every OpenSearch are typeless with a composable ``_index_template``.
"""

from typing import Optional

import attr


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ServerInfo:
    """What ``GET /`` told.

    :ivar number: ``version.number`` (e.g. ``"6.2.0"``).
    :ivar distribution: ``"elasticsearch"`` or ``"opensearch"``.
    :ivar major: the major version number.
    """

    number: str
    distribution: str
    major: int

    @property
    def doc_type(self) -> Optional[str]:
        """``"data"`` on Elasticsearch <= 6, else None (typeless)."""
        return "data" if self.distribution != "opensearch" and self.major <= 6 else None

    @property
    def template_flavor(self) -> str:
        """``"es6"``, ``"legacy"`` (ES 7) or ``"composable"``."""
        if self.distribution == "opensearch" or self.major >= 8:
            return "composable"
        return "es6" if self.major <= 6 else "legacy"

    @property
    def template_path(self) -> str:
        """``"/_index_template/"`` for composable templates (OpenSearch,
        Elasticsearch >= 8), else ``"/_template/"`` (legacy API, ES 6/7);
        the template name follows (docs/searchdb-plugin.rst)."""
        return "/_index_template/" if self.template_flavor == "composable" else "/_template/"

    def search_path(self, prefix: str, endpoint: str) -> str:
        """``/<prefix>*/[data/]<endpoint>`` (``_search``, ``_count``)."""
        typed = f"{self.doc_type}/" if self.doc_type else ""
        return f"/{prefix}*/{typed}{endpoint}"


def index_template(prefix: str, flavor: str, max_mapping_depth: int = 20) -> dict:
    """The index template for ``<prefix>*`` (account ids keyword with a
    ``.keyword`` sub-field for the spec's exact-match queries, block_time
    date, ``op`` stored but not indexed, date detection off so that
    ``op_object`` strings keep one type).

    :param flavor: ``"es6"`` (legacy template, mapping type ``data``),
        ``"legacy"`` (ES 7 legacy typeless) or ``"composable"`` (ES >= 7.8 /
        8, OpenSearch ``_index_template``).
    :param max_mapping_depth: ``searchdb-max-mapping-depth``; above the
        database's default of 20 the template raises the indexes'
        ``index.mapping.depth.limit`` to it (the reference option is named
        after that setting).

    The visitor's ``fill_data`` fields have the reference's types (ids
    keyword, amounts long, units and prices double, ``is_maker`` boolean).
    """
    kw = {"type": "keyword"}
    kw_sub = {"type": "keyword", "fields": {"keyword": {"type": "keyword"}}}
    double = {"type": "double"}
    amount = {"properties": {"asset": kw, "asset_name": kw, "amount": {"type": "long"},
                             "amount_units": double}}
    transfer = {"properties": dict(amount["properties"], **{"from": kw_sub, "to": kw_sub})}
    fill = {"properties": {"order_id": kw_sub, "account_id": kw_sub, "fill_price": double,
                           "fill_price_units": double, "is_maker": {"type": "boolean"}}}
    for side in ("pays_", "receives_"):
        fill["properties"].update({side + "asset_id": kw, side + "asset_name": kw,
                                   side + "amount": {"type": "long"},
                                   side + "amount_units": double})
    mappings = {
        "date_detection": False,
        "properties": {
            "account_history": {"properties": {
                "id": kw_sub, "account": kw_sub, "operation_id": kw_sub,
                "sequence": {"type": "long"}, "next": kw_sub}},
            "operation_history": {"properties": {
                "trx_in_block": {"type": "long"}, "op_in_trx": {"type": "long"},
                "virtual_op": {"type": "long"}, "is_virtual": {"type": "boolean"},
                "fee_payer": kw_sub, "op": {"type": "text", "index": False},
                "operation_result": {"type": "text", "index": False}}},
            "operation_type": {"type": "integer"},
            "operation_id_num": {"type": "long"},
            "block_data": {"properties": {
                "block_num": {"type": "long"}, "block_time": {"type": "date"},
                "trx_id": kw_sub}},
            "additional_data": {"properties": {"fee_data": amount,
                                               "transfer_data": transfer,
                                               "fill_data": fill}},
        },
    }
    pattern = [prefix + "*"]
    settings = ({"settings": {"index.mapping.depth.limit": max_mapping_depth}}
                if max_mapping_depth > 20 else {})
    if flavor == "composable":
        return {"index_patterns": pattern, "priority": 50,
                "template": dict(settings, mappings=mappings)}
    if flavor == "es6":
        return dict(settings, index_patterns=pattern, mappings={"data": mappings})
    return dict(settings, index_patterns=pattern, mappings=mappings)
