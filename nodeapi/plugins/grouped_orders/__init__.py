"""The ``grouped_orders`` plugin: open limit orders grouped by price range
(:mod:`.orders`), declared and built by :mod:`.plugin`.  Reference:
libraries/plugins/grouped_orders/ in bitshares-core.
"""
