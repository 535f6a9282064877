"""The command line's rough edges of issue 24 item 5: a closed stdout, did-you-mean for commands and options."""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tempbench.cli import COMMANDS, main

_REPO = Path(__file__).resolve().parents[2]


def _closed_stdout(args: list[str]) -> subprocess.CompletedProcess:
    """Run ``tempbench ARGS`` with a stdout whose reader is gone before it starts (``| head`` that has quit)."""
    read, write = os.pipe()
    os.close(read)  # every write to ``write`` now fails with EPIPE, whatever the timing
    env = dict(os.environ, PYTHONPATH=str(_REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # stdout buffered, as in a user's shell: the help text then reaches the pipe only when flushed
    env.pop("PYTHONUNBUFFERED", None)
    try:
        return subprocess.run([sys.executable, "-m", "tempbench.cli", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=600, check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [["check", "--data", "{sample}"], ["reproduce", "--help"], ["--help"]])
def test_a_closed_stdout_ends_quietly_with_exit_0(small_sample, args):
    proc = _closed_stdout([a.format(sample=small_sample) for a in args])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert "error" not in proc.stderr


def test_score_into_a_closed_pipe(small_sample, tmp_path):
    run = tmp_path / "oracle.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(small_sample), "--out", str(run), "--split", "dev"]) == 0
    proc = _closed_stdout(["score", str(run), "--data", str(small_sample), "--split", "dev"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


class _Closed:
    """A stdout whose reader has gone."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("no file descriptor")

    def isatty(self) -> bool:
        return False


def test_a_closed_stdout_in_process_returns_0(small_sample, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _Closed())
    assert main(["check", "--data", str(small_sample)]) == 0


def _fails(args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    return capsys.readouterr().err


def test_did_you_mean_a_subcommand(capsys):
    assert "did you mean 'score'?" in _fails(["scroe"], capsys)
    assert "did you mean 'build-benchmark'?" in _fails(["build-benchmrak"], capsys)


def test_did_you_mean_an_option(capsys):
    err = _fails(["reproduce", "--splt", "test"], capsys)
    assert "did you mean --split?" in err and "usage: tempbench reproduce" in err
    assert "did you mean --workers?" in _fails(["run", "--config", "oracle", "--workrs=2"], capsys)
    # a required option reported missing because it was mistyped
    assert "did you mean --config?" in _fails(["run", "--confg", "oracle"], capsys)
    assert "did you mean 'test'?" in _fails(["run", "--config", "oracle", "--split", "tset"], capsys)


def _long_options(name: str) -> list[str]:
    parser = argparse.ArgumentParser()
    importlib.import_module(COMMANDS[name][0]).add_arguments(parser)
    return [o for action in parser._actions for o in action.option_strings
            if o.startswith("--") and o != "--help" and len(o) >= 6]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_suggests_its_options(name, capsys):
    options = _long_options(name)
    if not options:
        pytest.skip(f"{name} has its options on its own subcommands (the test below)")
    option = options[0]
    typo = option[:-1] + "x" + option[-1]  # '--split' -> '--splixt': no prefix of any option
    err = _fails([name, typo], capsys)
    assert f"did you mean {option}?" in err, err


def test_fetch_suggests_the_options_of_its_own_subcommands(capsys, tmp_path):
    out = str(tmp_path / "x")
    assert "did you mean --retries?" in _fails(["fetch", "tgb", "--out", out, "--retriez", "3"], capsys)
    assert "did you mean --out?" in _fails(["fetch", "tgb", "--outt", out], capsys)
    assert "did you mean 'release'?" in _fails(["fetch", "relase"], capsys)


@pytest.mark.parametrize("outcome", ["returns", "fails"])
def test_a_command_runs_with_the_collector_paused_and_gives_it_back(monkeypatch, capsys, outcome):
    """Every command runs with the cyclic collector paused (the CLI's rule), which is running again afterwards."""
    import gc

    from tempbench_core.errors import TempbenchError

    seen = []

    def run(_args: argparse.Namespace) -> int:
        seen.append(gc.isenabled())
        if outcome == "fails":
            raise TempbenchError("no such file")
        return 0

    monkeypatch.setattr(importlib.import_module(COMMANDS["check"][0]), "run", run)
    assert gc.isenabled()
    assert main(["check"]) == (0 if outcome == "returns" else 2)
    assert seen == [False] and gc.isenabled()


def test_reproduce_s_drawing_processes_collect_whatever_they_were_forked_in():
    """A figure is a web of cycles: the processes that draw collect them, though the job's collector is paused."""
    import gc

    from tempbench.reproduce import _drawing_starts
    from tempbench_core.memory import gc_paused
    from tempbench_core.workers import WorkerPool, can_fork

    if not can_fork():
        pytest.skip("no fork here")
    with gc_paused(), WorkerPool(None, 1, initializer=_drawing_starts, fork=True) as pool:
        assert not gc.isenabled() and pool.submit(_collecting).result() is True


def _collecting(_: object) -> bool:
    import gc

    return gc.isenabled()
