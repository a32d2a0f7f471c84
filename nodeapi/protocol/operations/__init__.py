"""Operations: the wire types of every bitshares-core 7.x operation (0..77)
and operation (de)serialization.

Modules by family (each lists its structs in bitshares-core ``FC_REFLECT``
order): :mod:`.transfers`, :mod:`.market`, :mod:`.accounts`,
:mod:`.assets`, :mod:`.governance` (witnesses, committee, workers,
proposals), :mod:`.chain_parameters`, :mod:`.fee_parameters`,
:mod:`.custom` (custom, assert, fba), :mod:`.blind`, :mod:`.htlc`,
:mod:`.custom_authorities`, :mod:`.pools` (tickets, liquidity pools),
:mod:`.credit` (SameT funds, credit offers); :mod:`.table` joins them by
type number and :mod:`.variant` is the ``operation`` static_variant.
"""

from nodeapi.protocol.operations.variant import (  # noqa: F401
    OPERATION, OperationType, canonical_operation, deserialize_operation, operation_name,
    operation_type,
    serialize_operation, serialize_operation_body)
from nodeapi.protocol.operations.table import (  # noqa: F401
    FEE_PARAMETERS, OPERATION_IDS, OPERATIONS, VIRTUAL_OPERATIONS)
from nodeapi.protocol.operations.fee_parameters import (  # noqa: F401
    FEE_PARAMETERS_VARIANT, FEE_SCHEDULE)
from nodeapi.protocol.operations.chain_parameters import CHAIN_PARAMETERS  # noqa: F401
