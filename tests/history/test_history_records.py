"""The compact operation records of the in-memory account_history plugin
(nodeapi.history.oprecord): every operation of every type, the 203 real
mainnet operations of tests/fixtures and each result variant come back
exactly as the API answered them before; records are small."""

import json
import pathlib

import pytest

from nodeapi.applied import AppliedOperation
from nodeapi.history.oprecord import history_entry, pack_record, record_accounts, \
    record_block_num, record_first_n, record_type

from kit.operation_samples import SAMPLES
from kit.paths import FIXTURES

FIXTURE = pathlib.Path(FIXTURES) / "mainnet_operation_samples.go-bitshares.json"
RESULTS = ([0, {}], [1, "1.7.123456"], [2, {"amount": 10 ** 15, "asset_id": "1.3.121"}],
           [3, {"paid": [{"amount": 1, "asset_id": "1.3.0"}],
                "received": [{"amount": 2, "asset_id": "1.3.1"}], "fees": []}],
           [5, {"impacted_accounts": ["1.2.17"], "new_objects": ["1.23.4"]}])


def mainnet_operations():
    data = json.loads(FIXTURE.read_text())["operations"]
    return [[sample["op_id"], sample["data"]] for samples in data.values() for sample in samples]


def applied(op, result, m=7):
    return AppliedOperation(m, op, result, 123456, 3, 1, 0, False, "ab" * 20, "1.2.17",
                            ("1.2.17",))


def expected(m, op, result):
    return {"id": f"1.11.{m}", "op": op, "result": result, "block_num": 123456,
            "trx_in_block": 3, "op_in_trx": 1, "virtual_op": 0, "is_virtual": False,
            "block_time": "2020-09-13T12:26:40"}


@pytest.mark.parametrize("result", RESULTS, ids=lambda r: f"result{r[0]}")
def test_every_operation_type_and_result_round_trips(result):
    for op_type, op in sorted(SAMPLES.items()):
        op = [op_type, op] if not (isinstance(op, list) and len(op) == 2) else op
        record = pack_record(applied(op, result), 1_600_000_000, (17, 4096), 33)
        assert history_entry(7, record) == expected(7, op, result), op_type
        assert record_type(record) == op[0]
        assert record_accounts(record) == (17, 4096) and record_first_n(record) == 33
        assert record_block_num(record) == 123456


def test_mainnet_operations_round_trip_and_shrink():
    ops = mainnet_operations()
    assert len(ops) == 203
    json_bytes = record_bytes = 0
    for m, op in enumerate(ops):
        record = pack_record(applied(op, [0, {}], m), 1_600_000_000, ())
        assert history_entry(m, record) == expected(m, op, [0, {}])
        json_bytes += len(json.dumps([op, [0, {}]], separators=(",", ":")))
        record_bytes += len(record)
    assert record_bytes < 0.6 * json_bytes  # about half, header included


def test_a_transfer_record_is_small():
    op = [0, {"fee": {"amount": 264160, "asset_id": "1.3.0"}, "from": "1.2.1234",
              "to": "1.2.4567", "amount": {"amount": 123456789, "asset_id": "1.3.0"},
              "extensions": []}]
    record = pack_record(applied(op, [0, {}]), 1_600_000_000, (1234, 4567), 10 ** 9)
    assert len(record) <= 90  # 29 bytes of header, 16 of entries; its JSON alone is 156
    assert history_entry(7, record)["op"] == op
    assert record_accounts(record) == (1234, 4567) and record_first_n(record) == 10 ** 9
