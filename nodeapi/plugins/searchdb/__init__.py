"""The ``searchdb`` plugin (alias ``elasticsearch``): operation and account
history written to Elasticsearch or OpenSearch, as bitshares-core's
libraries/plugins/elasticsearch/ does (docs/searchdb-plugin.rst).  Declared
and built by :mod:`.plugin`; the block consumer is :mod:`.service`, the
documents :mod:`.documents` / :mod:`.adaptor`, the bulks :mod:`.bulk`,
:mod:`.spool`, :mod:`.shipper` and :mod:`.client`, the history API's reads
:mod:`.query` / :mod:`.reader`, the refill of lost documents
:mod:`.backfill`.
"""
