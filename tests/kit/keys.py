"""Keys and ids of the bundled test genesis (nodeapi.chain.genesis):
the development key owns init0..init10 and the genesis balance 1.15.0."""

from nodeapi.protocol.keys import PrivateKey


DEV_WIF = "5KQwrPbwdL6PhXujxW37FSSQZ1JiwsST4cqQzDeyXtP79zkvFD3"
DEV_PUB = "TEST6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5GDW5CV"
CHAIN_ID = "569cba9a00ee6e807a62389ea67de7c6954835390be62371709ec804c6bfe1f2"
#: a key no genesis account holds
OTHER_WIF = "5JWcdkhL3w4RkVPcZMdJsjos22yB5cSkPExerktvKnRNZR5gx1S"
OTHER_PUB = "TEST5z5e3BawwMY6UmcBQxYpkKZ8QQm4wdtS4KMZiWAcWBUC3RJuLT"


def key(seed):
    """(wif, TEST public key) of a deterministic test key."""
    k = PrivateKey.from_seed("authority-test-" + seed)
    return k.to_wif(), k.public_key.to_str("TEST")


#: every genesis witness (1.6.1..1.6.11) signing with the development key
WITNESS_KEYS = {f"1.6.{i}": DEV_WIF for i in range(1, 12)}
