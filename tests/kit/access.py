"""api-access test vectors (docs/rpc-access.rst): bytemaster / supersecret
(every API), user2 / superpassword2 (database and history) and the ``*``
default for any other user."""


VECTORS = {
    "permission_map": [
        ["bytemaster", {"password_hash_b64": "9e9GF7ooXVb9k4BoSfNIPTelXeGOZ5DrgOYMj94elaY=",
                        "password_salt_b64": "INDdM6iCi/8=",
                        "allowed_apis": ["database_api", "network_broadcast_api",
                                         "history_api", "network_node_api", "block_api"]}],
        ["user2", {"password_hash_b64": "myadjRISnFOWn2TTd91zqbY50q0w2j/oJGlcdQkUB0Y=",
                   "password_salt_b64": "Zb8JrQDKNIQ=",
                   "allowed_apis": ["database_api", "history_api"]}],
        ["*", {"password_hash_b64": "*", "password_salt_b64": "*",
               "allowed_apis": ["database_api", "network_broadcast_api", "history_api"]}],
    ]
}
