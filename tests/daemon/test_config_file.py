"""The data dir's config.ini, read as bitshares-core's witness_node reads
it (libraries/app/config_util.cpp ``load_configuration_options``): written
with every option commented out at its default at the first start, read at
every start, ``--config`` winning; genesis and api-access errors name the
INI file and line as every other option's do."""

import os
import re
import stat

import pytest
from twisted.python import usage

from nodeapi.config import Options
from nodeapi.config_file import config_text, write_new_config
from nodeapi.config_options import FLAGS, MULTI, SINGLE

from kit.daemon import Daemon


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def parse(*args):
    options = Options()
    options.parseOptions(list(args))
    return options


def _message(*args):
    with pytest.raises(usage.UsageError) as info:
        parse(*args)
    return str(info.value)


def test_the_written_file_names_every_option_commented_out_at_its_default(cwd):
    """Every option of the catalogue but data-dir is a ``# name = default``
    line; uncommenting all of them gives the defaults back, as an empty
    file does."""
    text = config_text()
    names = [name for name, *_ in SINGLE] + [name for name, _ in FLAGS] + [
        name for name, *_ in MULTI]
    written = re.findall(r"^# ([a-z0-9-]+) =( |$)", text, re.M)
    assert sorted(name for name, _ in written) == sorted(set(names) - {"data-dir"})
    assert not [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "# " + "=" * 78 + "\n# searchdb plugin options\n" in text
    active = "\n".join(line[2:] if re.match(r"# [a-z0-9-]+ =( |$)", line) else ""
                       for line in text.splitlines())
    (cwd / "all.ini").write_text(active)
    (cwd / "empty.ini").write_text("")
    every = dict(parse("--config", "all.ini"))
    assert every == dict(parse("--config", "empty.ini"), config=str(cwd / "all.ini"))


def test_no_config_ini_in_the_data_dir_is_remembered_to_be_written(cwd):
    options = parse("--data-dir", "d")
    assert options["config"] is None
    assert options.new_config == str(cwd / "d" / "config.ini")
    assert parse().new_config == str(cwd / "nodeapi_data" / "config.ini")
    assert parse("--devnet").new_config is None  # a devnet's data dir is temporary


def test_the_data_dir_config_ini_is_read_and_the_command_line_and_config_win(cwd):
    (cwd / "d").mkdir()
    (cwd / "d" / "config.ini").write_text("max-calls-in-flight = 7\napi-node-info = from d\n")
    options = parse("--data-dir", "d")
    assert options["config"] == str(cwd / "d" / "config.ini") and options.new_config is None
    assert (options["max-calls-in-flight"], options["api-node-info"]) == (7, "from d")
    assert parse("--data-dir", "d", "--max-calls-in-flight", "9")["max-calls-in-flight"] == 9
    (cwd / "other.ini").write_text("api-node-info = other\n")
    options = parse("--data-dir", "d", "--config", "other.ini")
    assert (options["max-calls-in-flight"], options["api-node-info"]) == (100, "other")
    assert parse("--data-dir", "d", "--devnet")["api-node-info"] == ""


def test_errors_of_the_data_dir_config_ini_name_it(cwd):
    (cwd / "d").mkdir()
    ini = cwd / "d" / "config.ini"
    ini.write_text("# x\nmax-calls-in-flight = lots\n")
    assert _message("--data-dir", "d") == (
        f"max-calls-in-flight ({ini} line 2): 'lots' is not an integer")
    ini.write_text("no-such-option = 1\n")
    assert _message("--data-dir", "d") == f"--data-dir: {ini} line 1: unknown option " \
                                          "'no-such-option'"
    ini.write_text(f"data-dir = {cwd / 'elsewhere'}\n")
    assert _message("--data-dir", "d") == (
        f"data-dir ({ini} line 1): the data dir's own config.ini cannot move the data dir to "
        f"'{cwd / 'elsewhere'}'; give --data-dir on the command line")
    ini.write_text(f"data-dir = {cwd / 'd'}\n")  # naming itself is fine
    assert parse("--data-dir", "d")["data-dir"] == str(cwd / "d")


def test_genesis_and_api_access_errors_name_the_ini_file_and_line(cwd):
    (cwd / "g.json").write_text("{not json")
    (cwd / "a.json").write_text('{"permission_map": 3}')
    (cwd / "c.ini").write_text("# genesis\ngenesis-json = missing.json\n")
    assert _message("--config", "c.ini") == (
        f"genesis-json ({cwd / 'c.ini'} line 2): cannot read {cwd / 'missing.json'}: "
        "No such file or directory")
    (cwd / "c.ini").write_text("genesis-json = g.json\n")
    assert _message("--config", "c.ini").startswith(
        f"genesis-json ({cwd / 'c.ini'} line 1): {cwd / 'g.json'} is not a genesis file: ")
    (cwd / "c.ini").write_text("\n\napi-access = a.json\n")
    message = _message("--config", "c.ini")
    assert message.startswith(f"api-access ({cwd / 'c.ini'} line 3): ")
    assert "permission_map" in message
    # on the command line, the option's name as before
    assert _message("--config", "c.ini", "--api-access", "a.json").startswith("--api-access: ")


def test_the_new_file_is_private_and_never_replaces_one(tmp_path):
    path = str(tmp_path / "config.ini")
    write_new_config(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert open(path).read() == config_text()
    with open(path, "w") as f:
        f.write("api-node-info = mine\n")
    with pytest.raises(FileExistsError):
        write_new_config(path)
    assert open(path).read() == "api-node-info = mine\n"
    assert os.listdir(tmp_path) == ["config.ini"]


@pytest.mark.slow
def test_a_daemon_writes_then_reads_its_data_dir_config_ini(tmp_path):
    """First start: config.ini written (logged), the defaults served.  The
    operator sets api-node-info and api-limit-get-assets there; the second
    start serves them."""
    data = tmp_path / "data"
    node = Daemon(data).start()
    try:
        assert node.call("get_info", api=1) == ""
        assert len(node.call("get_assets", ["1.3.0", "1.3.0"])) == 2
    finally:
        node.stop()
    ini = data / "config.ini"
    assert f"Wrote {ini}: every option commented out at its default" in node.log()
    text = ini.read_text()
    assert "\n# api-node-info =\n" in text
    ini.write_text(text.replace("\n# api-node-info =\n", "\napi-node-info = operator's node\n")
                   .replace("\n# api-limit-get-assets = 101\n", "\napi-limit-get-assets = 1\n"))
    node = Daemon(data, port=node.port).start()
    try:
        assert node.call("get_info", api=1) == "operator's node"
        with pytest.raises(RuntimeError, match="assets"):
            node.call("get_assets", ["1.3.0", "1.3.0"])
    finally:
        node.stop()
    assert node.log().count("Wrote ") == 1
