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

#: the units handed out first, in this order (prefixes of node ids): the
#: few long ones (reference nodes, daemons, client stories) so that no
#: worker is left with one of them at the end while the other idles; the
#: other units follow in pytest-xdist's order (most tests first)
LONG_FIRST = ("tests/reference/test_reference_objects.py", "tests/reference/",
              "tests/e2e/", "tests/clients/", "tests/devnet/", "tests/gateway/")


class SharedSetupScheduling(LoadFileScheduling):
    """``--dist loadfile`` with each of :data:`SHARED_DIRS` one unit of
    work (the directory is its scope), every other module its own; the
    units of :data:`LONG_FIRST` handed out first (:func:`long_first`)."""

    _ordered = False

    def _assign_work_unit(self, node) -> None:
        if not self._ordered:  # the queue is complete at the first assignment
            self._ordered = True
            units = sorted(self.workqueue.items(), key=lambda unit: long_first(unit[0]))
            self.workqueue.clear()
            self.workqueue.update(units)
        super()._assign_work_unit(node)

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


def unit_of(nodeid: str) -> str:
    """The unit of work of a test: the one of :data:`SHARED_DIRS` it is
    in, else its module (pytest-xdist's ``loadfile``)."""
    for directory in SHARED_DIRS:
        if nodeid.startswith(directory):
            return directory
    return nodeid.split("::", 1)[0]


def long_first(scope: str) -> int:
    """The rank of a unit of work: the index of the first of
    :data:`LONG_FIRST` it starts with, else after them all."""
    for rank, prefix in enumerate(LONG_FIRST):
        if scope.startswith(prefix):
            return rank
    return len(LONG_FIRST)
