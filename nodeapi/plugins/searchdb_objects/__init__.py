"""The ``searchdb-objects`` plugin (bitshares-core's ``es_objects``):
current chain objects in the search database (:mod:`.service`), its kinds
and settings (:mod:`.settings`), declared and built by :mod:`.plugin`.
Reference: libraries/plugins/es_objects/ in bitshares-core.
"""
