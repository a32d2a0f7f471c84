"""The ``account_history`` plugin (the default history plugin): operation
and account history kept in memory (:mod:`.history`, :mod:`.lookups`,
:mod:`.retention`), declared and built by :mod:`.plugin`.  Reference:
libraries/plugins/account_history/ in bitshares-core.
"""
