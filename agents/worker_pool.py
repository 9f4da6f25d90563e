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
* :func:`exit_on_signals` turns SIGTERM and SIGHUP into ``SystemExit`` in
  the parent, so they unwind through the same cleanup as Ctrl-C.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from types import FrameType
from typing import Any

_PR_SET_PDEATHSIG = 1
#: Seconds between the fallback watchdog's looks at the parent.
WATCHDOG_PERIOD = 1.0


def _die_with(parent: int) -> None:
    """In a worker: be killed when ``parent`` dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass
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
    _die_with(parent)
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
    """SIGKILL every worker of ``pool`` now and reap them (running tasks are lost)."""
    public = getattr(pool, "kill_workers", None)  # Python 3.14+
    if callable(public):
        public()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP raise ``SystemExit(128 + signal)`` (main thread only)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _exit)
