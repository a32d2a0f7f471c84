"""The systemd journal for tests, without a running journald: a daemon's
standard output as a systemd unit gives it to journald, turned into a real
journal file by Debian's ``systemd-journal-remote``, and read back with
``journalctl`` and ``fail2ban-regex`` (Debian packages systemd-journal-remote,
fail2ban, python3-systemd).

:func:`journal_stream_env` makes a file the process's "journal stream"
(``JOURNAL_STREAM=<st_dev>:<st_ino>`` as systemd sets it for a unit's
standard output); :func:`stream_entries` turns the bytes written there into
entries as journald's stdout-stream reader does (systemd
src/journal/journald-stream.c: one entry per line, a leading ``<N>`` is the
entry's ``PRIORITY`` and is removed from ``MESSAGE``, the unit's
``SyslogIdentifier=``, ``_PID``, ``_SYSTEMD_UNIT``, ``_TRANSPORT=stdout``);
:func:`write_journal` writes them in the journal export format through
``systemd-journal-remote`` into a ``.journal`` file.
"""

import os
import re
import shutil
import socket
import subprocess
import time

#: Debian's path of the journal-remote program
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
_PRIORITY = re.compile(rb"^<([0-7])>")


def journal_stream_env(path) -> dict:
    """``{"JOURNAL_STREAM": "<dev>:<ino>"}`` of the file ``path`` (created
    empty when missing): a process whose standard output is that file sees
    it as systemd's journal stream."""
    with open(path, "ab"):
        pass
    st = os.stat(path)
    return {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}


def stream_entries(data: bytes, pid: int, unit="nodeapi.service", identifier="nodeapi",
                   priority=6) -> list:
    """The journal entries (``{field: bytes}``) journald makes of ``data``
    written to a unit's stdout stream (module doc; ``priority``: the
    stream's default level, ``SyslogLevel=`` info)."""
    entries = []
    now = int(time.time() * 1e6)
    for number, line in enumerate(data.splitlines()):
        level = priority
        m = _PRIORITY.match(line)
        if m:
            level, line = int(m.group(1)), line[m.end():]
        entries.append({
            "__REALTIME_TIMESTAMP": str(now + number).encode(),
            "__MONOTONIC_TIMESTAMP": str(int(time.monotonic() * 1e6) + number).encode(),
            "_BOOT_ID": _boot_id().encode(), "_HOSTNAME": socket.gethostname().encode(),
            "_TRANSPORT": b"stdout", "_PID": str(pid).encode(),
            "_SYSTEMD_UNIT": unit.encode(), "SYSLOG_IDENTIFIER": identifier.encode(),
            "PRIORITY": str(level).encode(), "MESSAGE": line})
    return entries


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip().replace("-", "")
    except OSError:
        return "0" * 32


def write_journal(entries, path) -> None:
    """Write ``entries`` into the journal file ``path`` (``*.journal``) with
    ``systemd-journal-remote`` reading the export format."""
    if not os.path.exists(JOURNAL_REMOTE):
        raise AssertionError(f"{JOURNAL_REMOTE} is not installed "
                             "(Debian: apt-get install -y systemd-journal-remote)")
    export = b"".join(
        b"".join(key.encode() + b"=" + value + b"\n" for key, value in entry.items()) + b"\n"
        for entry in entries)
    proc = subprocess.run([JOURNAL_REMOTE, f"--output={path}", "-"], input=export,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")


def journalctl(path, *args) -> str:
    """``journalctl --file=path ARGS`` output (text)."""
    proc = subprocess.run([shutil.which("journalctl") or "journalctl", f"--file={path}",
                           "--no-pager", *args], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout.decode(errors="replace")
