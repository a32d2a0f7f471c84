"""The suite on parallel workers (pytest-xdist, ``-n 2 --dist loadfile``,
README.rst "Run the tests"): which tests one worker runs together.

pytest-xdist's ``loadfile`` sends whole test modules to a worker, so a
module-scoped fixture (a reference producer, a devnet, an osmem-server)
is set up once.  :class:`SharedSetupScheduling` also keeps together the
directories whose conftest has session-scoped set-ups that cost a daemon
and a client story (:data:`SHARED_DIRS`: tests/e2e's one daemon and its
python-bitshares scenario), which ``loadfile`` would otherwise run once
on each worker.  It is used only when pytest-xdist is installed and
``--dist loadfile`` is given (tests/conftest.py's
``pytest_xdist_make_scheduler``); ``python -m pytest -q`` runs serially
without it."""

from xdist.scheduler import LoadFileScheduling

#: test directories (relative to the repository root, as in node ids) run
#: by one worker as a whole: their session-scoped fixtures start daemons
SHARED_DIRS = ("tests/e2e/",)


class SharedSetupScheduling(LoadFileScheduling):
    """``--dist loadfile`` with each of :data:`SHARED_DIRS` one unit of
    work (the directory is its scope), every other module its own."""

    def _split_scope(self, nodeid: str) -> str:
        for directory in SHARED_DIRS:
            if nodeid.startswith(directory):
                return directory
        return super()._split_scope(nodeid)
