"""Evaluators: what applying each operation does to the chain state.

One module per operation family (graphene's libraries/chain/*_evaluator.cpp
files): :mod:`.transfer`, :mod:`.market`, :mod:`.account`, :mod:`.asset`,
:mod:`.governance`, :mod:`.vesting_balance`, :mod:`.withdraw_permission`,
:mod:`.htlc`, :mod:`.custom`, :mod:`.assertion`, :mod:`.balance`; what they share (the apply context, fee
payment, balance adjustment) is :mod:`.context`; the table from operation
type to evaluator, and where each of the 78 operation types belongs, is
:mod:`.registry`.  Nothing registers itself at import time.
"""
