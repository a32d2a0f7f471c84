"""The suite on two pytest-xdist workers (README's ``-n 2 --dist
loadfile``, kit.parallel): whole modules per worker, tests/e2e's modules
together (one session daemon and client story), the long units first."""

import pytest

xdist = pytest.importorskip("xdist")

from kit.parallel import LONG_FIRST, long_first, unit_of  # noqa: E402


def test_units_are_modules_and_the_e2e_directory():
    assert unit_of("tests/e2e/test_sync_restart.py::test_x") == "tests/e2e/"
    assert unit_of("tests/e2e/test_bitsharesjs.py::test_y[a]") == "tests/e2e/"
    assert unit_of("tests/chain/test_chain.py::TestBlocks::test_z") == "tests/chain/test_chain.py"
    assert unit_of("tests/reference/test_reference_rules.py::test_a") == \
        "tests/reference/test_reference_rules.py"


def test_long_units_come_first_in_their_order():
    units = ["tests/chain/test_chain.py", "tests/e2e/", "tests/reference/test_reference_rules.py",
             "tests/api/test_api.py", "tests/reference/test_reference_objects.py"]
    assert sorted(units, key=long_first) == [
        "tests/reference/test_reference_objects.py", "tests/reference/test_reference_rules.py",
        "tests/e2e/", "tests/chain/test_chain.py", "tests/api/test_api.py"]
    assert long_first("tests/protocol/test_protocol_block.py") == len(LONG_FIRST)
