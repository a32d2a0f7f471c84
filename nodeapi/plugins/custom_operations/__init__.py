"""The ``custom_operations`` plugin: account storage maps carried in custom
operations (:mod:`.storage`), declared and built by :mod:`.plugin`.
Reference: libraries/plugins/custom_operations/ in bitshares-core.
"""
