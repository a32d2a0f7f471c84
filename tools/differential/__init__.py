"""The differential runner: bitshares-core 7.0.2's witness_node and a
nodeapi node following it judge, apply and answer the same seeded
transactions, and every difference is listed (docs/differential.rst).

``python -m tools.differential --seed N --transactions M --out diff.json``"""
