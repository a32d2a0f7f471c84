"""Field-by-field comparison of two nodes' objects, the reference's
(kit.reference) and nodeapi's (kit.daemon), less the deliberate
differences of docs/reference-differences.rst: the differential runner's
module, :mod:`tools.differential.compare`, re-exported for the tests (one
implementation, one list of deliberate differences)."""

from tools.differential.compare import (  # noqa: F401 (re-exported)
    ACCOUNTS, BATCH, DELIBERATE_PATH, IMPLEMENTATION_TYPES, MISSING, PROTOCOL_TYPES, SPACES,
    Deliberate, Difference, compare_all_objects, compare_calls, compare_objects, diff_values,
    field_differences, general_path, is_allowed, kind_of, read_type, report)
