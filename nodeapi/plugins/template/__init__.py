"""The ``template`` plugin: the smallest real plugin, to copy when adding
one (bitshares-core libraries/plugins/template_plugin/): an operation
counter (:mod:`.counter`) declared and built by :mod:`.plugin`.
"""
