"""fail2ban for tests: the shipped filter and jail (etc/fail2ban) in a real
``fail2ban-server`` (Debian's fail2ban, python3-systemd) reading a journal
file, with the ``dummy`` action writing bans to a file instead of a
firewall."""

import os
import re
import shutil
import subprocess
import time

from kit.paths import ROOT

ETC = os.path.join(ROOT, "etc", "fail2ban")


def _program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise AssertionError(f"{name} is not installed (Debian: apt-get install -y fail2ban "
                             "python3-systemd)")
    return path


def jail_bans(journal, directory, jail="nodeapi", timeout=30.0) -> set:
    """The addresses the shipped ``jail`` bans reading the journal file
    ``journal`` (its ``backend = systemd`` pointed at that file, the
    filter's journalmatch as shipped), once the jail has read it: a
    ``fail2ban-server`` in the foreground with its configuration, socket and
    log under ``directory``, stopped before returning.  Own addresses are
    not ignored (``ignoreself = false``: the test's clients are 127.0.0.1)."""
    conf = os.path.join(directory, "fail2ban")
    for sub in ("filter.d", "jail.d", "action.d"):
        os.makedirs(os.path.join(conf, sub), exist_ok=True)
    shutil.copy(os.path.join(ETC, "filter.d", "nodeapi.conf"), os.path.join(conf, "filter.d"))
    shutil.copy(os.path.join(ETC, "jail.d", "nodeapi.conf"), os.path.join(conf, "jail.d"))
    shutil.copy("/etc/fail2ban/action.d/dummy.conf", os.path.join(conf, "action.d"))
    bans = os.path.join(directory, "fail2ban.bans")
    with open(os.path.join(conf, "fail2ban.conf"), "w") as f:
        f.write(f"[Definition]\nloglevel = INFO\nlogtarget = {directory}/fail2ban.log\n"
                f"socket = {directory}/f2b.sock\npidfile = {directory}/f2b.pid\n"
                "dbfile = :memory:\nsyslogsocket = auto\n")
    with open(os.path.join(conf, "jail.conf"), "w") as f:
        f.write(f'[DEFAULT]\nignoreself = false\nignoreip =\nbackend = auto\n'
                f'action = dummy[target="{bans}"]\n')
    with open(os.path.join(conf, "jail.d", "nodeapi.local"), "w") as f:
        f.write(f'[{jail}]\nbackend = systemd[journalfiles="{journal}"]\n')
    server = subprocess.Popen([_program("fail2ban-server"), "-f", "-x", "-c", conf],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + timeout
        status = ""
        while time.time() < deadline:
            proc = subprocess.run([_program("fail2ban-client"), "-c", conf, "status", jail],
                                  capture_output=True, timeout=30)
            status = proc.stdout.decode()
            read = re.search(r"Total failed:\s+(\d+)", status)
            banned = re.search(r"Banned IP list:\s*(.*)", status)
            if read and banned and int(read.group(1)) and (banned.group(1).strip() or
                                                           time.time() > deadline - timeout / 2):
                return set(banned.group(1).split())
            time.sleep(0.3)
        raise AssertionError(f"the jail read nothing in {timeout} s: {status}")
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
