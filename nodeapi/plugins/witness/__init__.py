"""The witness plugin: block production by the witnesses whose keys the
node holds (bitshares-core libraries/plugins/witness)."""
