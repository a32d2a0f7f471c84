"""The ``market_history`` plugin: fills, tickers and buckets per market
(:mod:`.history`, :mod:`.objects`) and the liquidity pool history graphene
keeps in the same plugin (:mod:`.pools`), declared and built by
:mod:`.plugin`.  Reference: libraries/plugins/market_history/ in
bitshares-core.
"""
