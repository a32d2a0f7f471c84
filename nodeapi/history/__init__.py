"""What the history plugins share: compact operation records (:mod:`.oprecord`)
and chunked checkpoint records (:mod:`.snapshot`).  The plugins themselves are
packages of :mod:`nodeapi.plugins` (``account_history``, ``market_history``,
``searchdb``, ...); see docs/DESIGN.rst, ``nodeapi/history/``."""
