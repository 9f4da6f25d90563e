"""Worker process pools that die with their parent, whatever the signal.

Both the arena (``yinsh-eval``, in-run evaluations) and the trainer's
self-play pool run games in ``spawn`` worker processes.  Left alone, a
worker outlives a parent that is killed: ``ProcessPoolExecutor`` only stops
workers on a clean shutdown.  So:

* :func:`guarded_pool` starts workers that ask the kernel to SIGKILL them
  when their parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), with a
  watchdog thread on the parent's pid as a fallback elsewhere, and that
  ignore SIGINT (a Ctrl-C reaches the whole process group; the parent
  decides).  This covers a parent killed by SIGKILL.
* :func:`kill_workers` stops a pool's workers at once, for a parent
  interrupted mid-game (no waiting for running games to finish).
* What a worker starts ends with it (an agent's helper, a non-daemon
  ``multiprocessing.Process`` the worker's exit would wait for, a ``setsid``
  daemon, an ``os.fork()`` copy): each worker leads a process group of its
  own, is a child subreaper (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``: an
  orphaned descendant is re-parented to it, not to init, so its tree holds
  every process started under it) and SIGKILLs that tree when it exits,
  before ``multiprocessing`` joins its children (:func:`end_tree`, through
  ``/proc``); :func:`kill_workers` ends a worker's tree with it, and a worker
  that died leaves what its process group still names (:func:`end_group`).
* :func:`exit_on_signals` turns SIGTERM and SIGHUP into ``SystemExit`` in
  the parent, so they unwind through the same cleanup as Ctrl-C, and bounds
  that cleanup: a process still alive :data:`EXIT_GRACE` seconds after the
  signal writes every thread's stack to stderr and exits (status 1).

Where a signal may interrupt.  A Python signal handler runs in the main
thread between two bytecodes, wherever that thread is, and its exception
(``SystemExit``, ``KeyboardInterrupt``) unwinds from there.  Raised while
the main thread holds a lock the pool's own threads need, it can leave that
lock held: ``concurrent.futures.wait`` takes every future's lock in turn
before it looks at them (outside any ``try``), and even ``with condition:``
can be interrupted after the lock is taken but before the block is entered.
The pool's manager thread then blocks forever marking those futures failed,
and ``shutdown(wait=True)`` and the interpreter's exit both join it: the
process never exits.  That was the rare hang of a trainer signalled during
an evaluation on a loaded machine (the main thread, preempted, spends more
time inside that loop).  So :func:`results_as_finished` touches the pool
(submitting, reading a future) inside :func:`signals_deferred`, where the
handlers of :func:`exit_on_signals` only record the signal, and waits in
``SimpleQueue.get``, which holds nothing and where the signal is raised.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import multiprocessing
import multiprocessing.util
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from agents.params import clip

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Most rounds of :func:`end_tree` stopping the processes it finds (each round
#: stops every one found; only those started meanwhile are left for the next).
_STOP_ROUNDS = 100
#: Seconds between the fallback watchdog's looks at the parent.
WATCHDOG_PERIOD = 1.0
#: Seconds a process has, after SIGTERM, SIGHUP or SIGINT, to clean up and exit
#: (a trainer takes under 10 s on a machine loaded 10 times over) before it
#: writes its threads' stacks to stderr and exits with status 1.
EXIT_GRACE = 60.0

R = TypeVar("R")


def _prctl(option: int, value: int) -> None:
    """Linux ``prctl(option, value)``; nothing elsewhere or where libc lacks it."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(option, value, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass


def guard_worker(parent: int) -> None:
    """In a worker process: die with ``parent``, ignore Ctrl-C, and end what it starts
    when it exits (see the module docstring)."""
    _die_with(parent)
    with contextlib.suppress(OSError):  # a group of its own: end_group names its children
        os.setpgid(0, 0)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    # At exit, before multiprocessing joins the worker's children (a non-daemon one
    # would be waited for forever): finalizers of priority >= 0 run first.
    multiprocessing.util.Finalize(None, end_tree, args=(os.getpid(),), exitpriority=100)


def _die_with(parent: int) -> None:
    """In a worker: be killed when ``parent`` dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCHDOG_PERIOD)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _guarded_init(
    parent: int, initializer: Callable[..., None] | None, args: tuple[Any, ...]
) -> None:
    guard_worker(parent)
    if initializer is not None:
        initializer(*args)


def guarded_pool(
    max_workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> ProcessPoolExecutor:
    """A ``spawn`` process pool whose workers die with this process."""
    return ProcessPoolExecutor(
        max_workers=max_workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_guarded_init,
        initargs=(os.getpid(), initializer, initargs),
    )


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every worker of ``pool`` now, and every process it started, and reap the
    workers (running tasks are lost)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pids = [process.pid for process in processes if process.pid is not None]
    for pid in pids:
        end_tree(pid, with_root=True)
    public = getattr(pool, "kill_workers", None)  # Python 3.14+
    if callable(public):
        public()
    else:
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join(timeout=5)
    for pid in pids:
        end_group(pid)


def descendants(root: int) -> list[int]:
    """The live processes below ``root``, read from ``/proc`` ([] where there is none).

    A zombie is left out: it has ended, and has no children (they were re-parented).
    """
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat.rpartition(b")")[2].split()  # after "pid (name)": state, ppid, ...
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def end_tree(root: int, *, with_root: bool = False) -> None:
    """SIGKILL every process below ``root`` (and ``root`` too, ``with_root``).

    Each is stopped (SIGSTOP) as it is found, so that none starts another
    unseen; what was started meanwhile is below a stopped one, found in the
    next round.  Then all are killed.
    """
    stopped: list[int] = []
    if with_root:
        _send(root, signal.SIGSTOP)
        stopped.append(root)
    seen = set(stopped)
    for _ in range(_STOP_ROUNDS):
        found = [pid for pid in descendants(root) if pid not in seen]
        if not found:
            break
        for pid in found:
            _send(pid, signal.SIGSTOP)
        stopped.extend(found)
        seen.update(found)
    for pid in stopped:
        _send(pid, signal.SIGKILL)


def end_group(pgid: int) -> None:
    """SIGKILL process group ``pgid`` (a worker's, :func:`guard_worker`) if any is left;
    never this process's own group."""
    if hasattr(os, "killpg") and pgid > 1 and pgid != os.getpgid(0):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def _send(pid: int, signum: int) -> None:
    with contextlib.suppress(OSError):  # ended meanwhile, or not ours to signal
        os.kill(pid, signum)


def results_as_finished(
    pool: Executor, fn: Callable[..., R], calls: Iterable[tuple[Any, ...]]
) -> Iterator[tuple[int, R]]:
    """``(i, fn(*args))`` for the ``i``-th ``args`` of ``calls``, run in ``pool``,
    in the order they finish (a call's exception is raised here).

    Safe to interrupt by a signal at any moment: see the module docstring.
    """
    finished: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()
    index: dict[Future[R], int] = {}
    with signals_deferred():
        for i, args in enumerate(calls):
            future = pool.submit(fn, *args)
            index[future] = i
            future.add_done_callback(finished.put)  # called by the pool's thread
    for _ in range(len(index)):
        future = finished.get()  # the one wait: holds no lock; a signal is raised here
        with signals_deferred():
            result = future.result()
        yield index[future], result


_deferring = 0
_deferred: BaseException | None = None
_exit_armed = False


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold back the exception of an :func:`exit_on_signals` handler to the block's end.

    For main-thread code that takes locks other threads need: an exception
    raised inside it could leave one held.  No effect in other threads (they
    never run signal handlers) nor on other handlers.
    """
    global _deferring, _deferred
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _deferred is not None:
            exc, _deferred = _deferred, None
            raise exc


def _raise(exc: BaseException) -> None:
    """A handler's exception: bound the exit, then raise now or where deferred."""
    global _deferred, _exit_armed
    if not _exit_armed:  # the first signal's deadline: later ones do not put it off
        _exit_armed = True
        # faulthandler's watchdog is a C thread: arming it takes no Python lock.
        faulthandler.dump_traceback_later(EXIT_GRACE, exit=True)
    if _deferring:
        if _deferred is None:
            _deferred = exc
        return
    raise exc


class SignalExit(SystemExit):
    """The ``SystemExit`` of a signal (:func:`exit_on_signals`): never an agent's own."""


def agent_exit(exc: SystemExit) -> str:
    """An agent's own ``sys.exit()`` in a failure's words (``SystemExit(3)``, the code
    clipped); a signal's :class:`SignalExit` is raised again: it ends the process."""
    if isinstance(exc, SignalExit):
        raise exc
    return f"SystemExit({clip(repr(exc.code))})"


def _exit(signum: int, frame: FrameType | None) -> None:
    _raise(SignalExit(128 + signum))


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _raise(KeyboardInterrupt())


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP raise ``SystemExit(128 + signal)``, SIGINT (if Python's default
    handler has it) ``KeyboardInterrupt``; the process then has :data:`EXIT_GRACE`
    seconds to exit (main thread only)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _exit)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
