"""Worker processes that share a large read-only context with the process that starts them.

A run needs the KG index (hundreds of MB of arrays) and the benchmark in every
worker. :class:`WorkerPool` is :class:`concurrent.futures.ProcessPoolExecutor`
with the ``fork`` start method: a ``fork``ed worker inherits the context
without pickling it (copy-on-write), and each task is a plain function called
as ``task(context, *args)``, with only its arguments and its result pickled.
With one worker, or where ``fork`` does not exist, every task runs in the
calling process (the results are the same: tasks must not depend on where they
run).

The context reaches a worker through the executor's initializer and stays in
:data:`_CONTEXT` of the worker process only, the one per-process slot of the
project (the calling process never sets it).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, Generic, TypeVar

from tempbench_core.atomic import remove_unfinished

C = TypeVar("C")
R = TypeVar("R")

#: The context of this worker process (set by :func:`_start` in a worker, never in the calling process).
_CONTEXT: list[Any] = []


class Packed(Generic[R]):
    """An object pickled once, by the process that made it, and carried as those bytes.

    For a result that the calling process only passes on to another task:
    sent back and forth as bytes (copied, not walked object by object), it is
    unpickled only where it is read (:meth:`unpack`).
    """

    __slots__ = ("data",)

    def __init__(self, value: R) -> None:
        self.data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def unpack(self) -> R:
        """The object again (a copy)."""
        return pickle.loads(self.data)  # noqa: S301 - bytes pickled by a process of this job, never read from a file

    def __reduce__(self) -> tuple[Callable[[bytes], Packed[R]], tuple[bytes]]:
        return _packed, (self.data,)


def _packed(data: bytes) -> Packed[Any]:
    packed: Packed[Any] = Packed.__new__(Packed)
    packed.data = data
    return packed


def cpu_count() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def can_fork() -> bool:
    """Whether worker processes can inherit a context (the ``fork`` start method exists)."""
    return "fork" in multiprocessing.get_all_start_methods()


def _start(context: Any, initializer: Callable[[], None] | None) -> None:
    # Ctrl-C is the calling process's to handle: it stops the pool and exits 130
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # stopped by the pool (a failure or Ctrl-C), a worker leaves no half-written output behind
    signal.signal(signal.SIGTERM, _stopped)
    _CONTEXT[:] = [context]
    if initializer is not None:
        initializer()


def _stopped(*_: Any) -> None:
    remove_unfinished()
    os._exit(128 + signal.SIGTERM)


def _call(task: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return task(_CONTEXT[0], *args)


class _Done(Future):
    """A future of a task already run in the calling process."""

    def __init__(self, task: Callable[..., Any], context: Any, args: tuple[Any, ...]) -> None:
        super().__init__()
        try:
            self.set_result(task(context, *args))
        except Exception as exc:  # delivered by result(), as a worker's would be (Ctrl-C is not caught)
            self.set_exception(exc)


class WorkerPool(Generic[C]):
    """Run ``task(context, *args)`` in ``workers`` forked processes (or in this one); a context manager.

    Parameters
    ----------
    context:
        What every task receives first; inherited by the workers when they are
        forked, so it must be complete before the first :meth:`submit`.
    workers:
        Processes (1: every task runs in this process, when it is submitted).
    initializer:
        Called once in each worker after the fork (e.g. a slow import done early).
    fork:
        Fork the workers even for one (a process of its own), or never;
        default: when there are several.
    """

    def __init__(self, context: C, workers: int, initializer: Callable[[], None] | None = None,
                 fork: bool | None = None) -> None:
        self.context = context
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        if (workers > 1 if fork is None else fork) and can_fork():
            self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                                 initializer=_start, initargs=(context, initializer))

    @property
    def in_process(self) -> bool:
        """Whether the tasks run in this process."""
        return self._executor is None

    def submit(self, task: Callable[..., R], *args: Any) -> Future[R]:
        """Start ``task(context, *args)``; its result (or its exception) comes through the future."""
        if self._executor is None:
            return _Done(task, self.context, args)
        return self._executor.submit(_call, task, args)

    def map_unordered(self, task: Callable[..., R], args: Iterable[tuple[Any, ...]]) -> Iterator[tuple[int, R]]:
        """``(index, result)`` of ``task(context, *a)`` for each ``a`` of ``args``, as they finish.

        In this process the tasks run one at a time, in order, as the results are read.
        """
        if self._executor is None:
            for i, a in enumerate(args):
                yield i, task(self.context, *a)
            return
        futures = {self.submit(task, *a): i for i, a in enumerate(args)}
        for future in as_completed(futures):
            yield futures[future], future.result()

    def close(self, cancel: bool = False) -> None:
        """Stop the workers (``cancel``: drop the tasks not started; a failure or Ctrl-C)."""
        if self._executor is not None:
            if cancel:
                # a worker busy with a long task is not waited for
                for process in list(getattr(self._executor, "_processes", {}).values()):
                    process.terminate()
            self._executor.shutdown(wait=True, cancel_futures=cancel)
            self._executor = None

    def __enter__(self) -> WorkerPool[C]:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        self.close(cancel=kind is not None)


class OneAtATime:
    """``step()`` run by one forked process at a time (a lock they inherit), e.g. a worker pool's initializer.

    Two processes each importing a large library while a third works beside
    them on two cores slow the third down by a third; one after the other they
    take only the core it leaves free.
    """

    def __init__(self, step: Callable[[], None]) -> None:
        self.step = step
        self.lock = multiprocessing.get_context("fork").Lock()

    def __call__(self) -> None:
        with self.lock:
            self.step()
