"""The chain: the state graphene's ``database`` keeps (bitshares-core
libraries/chain/) and how blocks change it.  :mod:`.chain` (the
:class:`~nodeapi.chain.chain.Chain`: pending transactions, block production and
application, replay, notification of consumers), :mod:`.state` and
:mod:`.indexes` (the object store and its indexes), :mod:`.blocks` and
:mod:`.transactions` (applying them), :mod:`.evaluators` (one module per
operation family), :mod:`.market` (the matching engine), :mod:`.maintenance`,
:mod:`.blocklog` (the block log); every module's role: docs/DESIGN.rst,
``nodeapi/chain/``.  In the layers, above :mod:`nodeapi.protocol` and below
history, peers and the API sets."""
