"""What the kit's process runners (:mod:`tools.nodeapi_daemon`,
:mod:`tools.reference_node`) share: stopping a child process with a
signal and a deadline, and reading its log."""

import subprocess


def stop_process(proc, log_file, sig, timeout: float):
    """Send ``sig`` to ``proc`` (a :class:`subprocess.Popen`, or None) and
    wait up to ``timeout`` s, then SIGKILL; close ``log_file``.  Answers the
    exit status (None when it never started; the status it already had when
    it had ended)."""
    if proc is None or proc.poll() is not None:
        return proc.returncode if proc else None
    proc.send_signal(sig)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    log_file.close()
    return code


def read_log(path: str) -> str:
    """The text of the log at ``path`` (bytes that are not UTF-8 replaced)."""
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")
