"""The one daemon runner, ``twistd -n nodeapi`` in a subprocess: it lives
in ``tools/nodeapi_daemon.py`` (the differential runner starts its
follower with it too); the tests import it from here (``ROOT`` is the
repository root, as :data:`kit.paths.ROOT`)."""

from tools.nodeapi_daemon import (ACCESS, ROOT, Daemon, DaemonError, free_port,
                                  twistd_command)

__all__ = ["ACCESS", "ROOT", "Daemon", "DaemonError", "free_port", "twistd_command"]
