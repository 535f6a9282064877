"""Shared fixtures: an isolated cache, one generated small sample per session, and a runner
of ``tempbench`` command lines (each run once per session).

Tests never touch the user's cache: ``TEMPBENCH_CACHE`` points into pytest's
temporary directory before any test runs.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[1]
_SESSION_CACHE = Path(tempfile.mkdtemp(prefix="tempbench-test-cache-"))
os.environ["TEMPBENCH_CACHE"] = str(_SESSION_CACHE)


@pytest.fixture(scope="session")
def small_sample() -> Path:
    """The default generated sample (small scale, seed 42), built once per session."""
    from tempbench.data import ensure_default_sample

    return ensure_default_sample()


@pytest.fixture(scope="session")
def small_index(small_sample: Path):
    """KG + BM25 index of the small sample, built once per session."""
    from retriever.index import load_index
    from tempbench.data import resolve_data

    paths = resolve_data(data=small_sample)
    return load_index(paths.kg, paths.labels, cache_dir=_SESSION_CACHE / "index")


class CommandRunner:
    """Runs ``tempbench ...`` command lines as a user types them, in one working directory.

    Each distinct command runs once per session (a subprocess of this
    interpreter, with this checkout first on ``PYTHONPATH`` and the session's
    ``TEMPBENCH_CACHE``, so the default data is the session's small sample);
    later calls return the same completed process. Commands that tests declare
    with the ``tempbench_commands`` marker start in a background thread as soon
    as the session is collected, one after another, so on two cores they run
    while the other tests do; a test asking for one waits for it.
    """

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._results: dict[str, subprocess.CompletedProcess | BaseException] = {}
        self._pending: dict[str, threading.Event] = {}
        self._running: list[subprocess.Popen] = []

    def _run(self, command: str) -> subprocess.CompletedProcess:
        words = shlex.split(command)
        assert words[0] == "tempbench", command
        env = dict(os.environ, TEMPBENCH_CACHE=str(_SESSION_CACHE))
        env["PYTHONPATH"] = str(_REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        argv = [sys.executable, "-m", "tempbench.cli", *words[1:]]
        proc = subprocess.Popen(argv, cwd=self.workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._running.append(proc)
        try:
            out, err = proc.communicate(timeout=1800)
        finally:
            self._running.remove(proc)
        return subprocess.CompletedProcess(argv, proc.returncode, out, err)

    def start(self, commands: list[str]) -> None:
        """Run ``commands`` (each at most once) in order in a background thread."""
        todo = [c for c in dict.fromkeys(commands) if c not in self._results and c not in self._pending]
        events = {c: threading.Event() for c in todo}
        self._pending.update(events)

        def work() -> None:
            for command in todo:
                try:
                    self._results[command] = self._run(command)
                except BaseException as exc:  # noqa: BLE001 - handed to the test that waits for it
                    self._results[command] = exc
                finally:
                    events[command].set()

        threading.Thread(target=work, name="tempbench-commands", daemon=True).start()

    def __call__(self, command: str) -> subprocess.CompletedProcess:
        """The completed ``command`` (run now unless it already ran or is running); fails on a non-zero exit."""
        if command in self._pending:
            self._pending[command].wait()
        elif command not in self._results:
            self._results[command] = self._run(command)
        result = self._results[command]
        if isinstance(result, BaseException):
            raise result
        assert result.returncode == 0, f"{command!r} exited with {result.returncode}:\n{result.stderr}"
        return result

    def stop(self) -> None:
        """Kill the commands still running (the session is over)."""
        for proc in list(self._running):
            proc.kill()


_COMMANDS = CommandRunner(Path(tempfile.mkdtemp(prefix="tempbench-test-commands-")))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tempbench_commands(*commands): tempbench command lines the test runs with the tempbench_commands "
                   "fixture; they start in the background once the session is collected")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    commands = [c for item in items for mark in item.iter_markers("tempbench_commands") for c in mark.args]
    if commands and not config.option.collectonly:
        from tempbench.data import ensure_default_sample

        ensure_default_sample()  # here, so that nothing generates it concurrently
        _COMMANDS.start(commands)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _COMMANDS.stop()


@pytest.fixture(scope="session")
def tempbench_commands(small_sample: Path) -> CommandRunner:
    """The session's :class:`CommandRunner` (its default data generated by ``small_sample``)."""
    return _COMMANDS
