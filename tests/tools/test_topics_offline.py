"""``streams-runtime topics`` without a broker: usage errors, and no cluster configured."""

from __future__ import annotations

import pytest

from streams_runtime.cli import main


@pytest.fixture
def no_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMS_RUNTIME_HOME", str(tmp_path))
    monkeypatch.delenv("BOOTSTRAP_SERVERS", raising=False)


@pytest.mark.parametrize("command", [["topics", "list"], ["topics", "describe", "t"]])
def test_should_say_how_to_give_a_cluster_when_none_is_configured(no_cluster, capsys, command):
    assert main(command) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no Kafka cluster to talk to: pass --bootstrap-servers HOST:PORT")
    assert "streams-runtime broker start" in err


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["topics", "create", "t", "--partitions", "0"], "must be an integer >= 1"),
        (["topics", "create", "t"], "--partitions"),
        (["topics", "create", "t", "--partitions", "1", "--config", "retention.ms"], "KEY=VALUE"),
        (["topics", "create", "a/b", "--partitions", "1"], "not a legal topic name"),
        (["topics", "create", "t", "--partitions", "1", "--replication-factor", "0"], "integer >= 1"),
    ],
)
def test_should_refuse_bad_usage_with_exit_code_2(no_cluster, capsys, command, says):
    with pytest.raises(SystemExit) as exited:
        main(command)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err
