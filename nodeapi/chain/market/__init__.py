"""The matching engine of the chain's markets: limit orders, debt
positions of market-issued assets, margin calls, force settlements,
global settlement and revival.

- :mod:`~nodeapi.protocol.asset`: graphene's price arithmetic;
- :mod:`~nodeapi.chain.market.limits`: limit orders and market fees;
- :mod:`~nodeapi.chain.market.bitasset_data`: the 2.4.N object and feeds;
- :mod:`~nodeapi.chain.market.positions`: call orders 1.8.N;
- :mod:`~nodeapi.chain.market.swan`: black swans, collateral bids, revival;
- :mod:`~nodeapi.chain.market.individual`: individual settlement (BSRM 2);
- :mod:`~nodeapi.chain.market.settle_funds`: asset_settle against a fund;
- :mod:`~nodeapi.chain.market.settle_orders`: force settlements 1.4.N;
- :mod:`~nodeapi.chain.market.margin`: margin calls and ``apply_order``;
- :mod:`~nodeapi.chain.market.upkeep`: per-block and maintenance steps.

The evaluators (:mod:`nodeapi.chain.evaluators`) call into it; it uses
only their shared :mod:`~nodeapi.chain.evaluators.context`.
"""
