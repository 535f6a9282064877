"""The command dispatcher: help, version, exit codes (0 ok, 2 user error, 1 bug)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tempbench import cli
from tempbench_core.errors import InputError


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tempbench.cli", *args], capture_output=True, text=True, check=False)


def test_help_lists_every_command() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    for name in cli.COMMANDS:
        assert name in proc.stdout


def test_every_command_has_help() -> None:
    for name in cli.COMMANDS:
        proc = run_cli(name, "--help")
        assert proc.returncode == 0, (name, proc.stderr)
        assert "usage: tempbench" in proc.stdout


def test_unknown_command_is_a_user_error() -> None:
    proc = run_cli("no-such-command")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


def test_no_command_prints_help_and_fails() -> None:
    proc = run_cli()
    assert proc.returncode == 2
    assert "COMMAND" in proc.stdout


def test_user_error_exit_code_2_without_traceback(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = type(sys)("fake_cmd")
    module.add_arguments = lambda parser: None

    def failing_run(args: object) -> int:
        raise InputError("x.csv", 3, "non-integer year 'abc'", "an integer year")

    module.run = failing_run
    monkeypatch.setitem(sys.modules, "fake_cmd", module)
    monkeypatch.setitem(cli.COMMANDS, "fake", ("fake_cmd", "a fake command"))
    assert cli.main(["fake"]) == 2
    err = capsys.readouterr().err
    assert "x.csv:3: non-integer year 'abc' (expected an integer year)" in err
    assert "Traceback" not in err


def test_internal_error_exit_code_1_and_debug_reraises(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = type(sys)("fake_bug")
    module.add_arguments = lambda parser: None

    def buggy_run(args: object) -> int:
        raise ZeroDivisionError("boom")

    module.run = buggy_run
    monkeypatch.setitem(sys.modules, "fake_bug", module)
    monkeypatch.setitem(cli.COMMANDS, "bug", ("fake_bug", "a buggy command"))
    assert cli.main(["bug"]) == 1
    assert "internal error" in capsys.readouterr().err
    with pytest.raises(ZeroDivisionError):
        cli.main(["bug", "--debug"])


def test_unusable_user_path_is_a_user_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = type(sys)("fake_path")
    module.add_arguments = lambda parser: None

    def run(args: object) -> int:
        raise IsADirectoryError(21, "Is a directory", "out/")

    module.run = run
    monkeypatch.setitem(sys.modules, "fake_path", module)
    monkeypatch.setitem(cli.COMMANDS, "path", ("fake_path", "writes to a directory"))
    assert cli.main(["path"]) == 2
    assert "cannot use out/: Is a directory" in capsys.readouterr().err
