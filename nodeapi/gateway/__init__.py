"""The gateway: nodeapi in front of bitshares-core nodes (``--upstream``).

- :mod:`~nodeapi.gateway.subscriptions`: the merged upstream subscription
  (``SubscriptionHub``); :mod:`~nodeapi.gateway.client_subscriptions`: one
  client's subscription functions; :mod:`~nodeapi.gateway.notice_routing`:
  who receives an upstream notice, encoded once;
  :mod:`~nodeapi.gateway.subscribing_reads`: the reads that subscribe.
"""
