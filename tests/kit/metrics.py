"""Reading a running node's ``/metrics``: the sample values and the metric
names it exports (for the alert rules and the dashboard in etc/)."""

import re
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

#: the sample names of a family of each type (a family without samples yet,
#: a labelled counter nobody incremented, still exports these names)
_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"),
             "summary": ("_count", "_sum", ""), "gauge": ("",), "info": ("_info",),
             "untyped": ("",), "unknown": ("",), "stateset": ("",), "gaugehistogram": (
                 "_bucket", "_gcount", "_gsum")}
#: the metric names a PromQL expression uses: ours, the process collector's
#: and Prometheus's own ``up``
PROMQL_NAMES = re.compile(r"\b((?:nodeapi|process)_[a-z0-9_]+|up)\b(?!\s*\()")


def scrape_text(port: int, timeout: float = 10) -> str:
    """The text of ``GET http://127.0.0.1:<port>/metrics``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as resp:
        return resp.read().decode()


def samples(text: str) -> dict:
    """``{"name{labels}": value}`` of an exposition text."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}


def exported_names(text: str) -> set:
    """Every metric name a PromQL query may use on this exposition: each
    sample's name, and each family's names by its type."""
    names = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in _SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


def promql_names(expr: str) -> set:
    """The metric names in a PromQL expression (not its functions)."""
    return set(PROMQL_NAMES.findall(expr))
