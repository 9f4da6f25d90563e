"""Worker pools interrupted by a signal at any moment: no lock left held, a bounded exit.

The signal handler of :func:`agents.infra.worker_pool.exit_on_signals` runs in the
main thread between two bytecodes; these tests call it at every bytecode of
draining a pool in turn (through an opcode tracer), a superset of the
moments where CPython can run it.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import signal
import subprocess
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Executor, ThreadPoolExecutor, wait
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from agents.infra import worker_pool
from agents.infra.worker_pool import results_as_finished

#: Generous: joining threads that are done takes milliseconds, even on a loaded machine.
JOIN_BOUND = 60.0
#: Where the weak reference callbacks that garbage collection runs live.
WEAKREF_FILES = ("/weakref.py", "/_weakrefset.py")


def drain(pool: Executor) -> None:
    """What the arena does: run tasks in ``pool`` and take the results as they finish."""
    finished = results_as_finished(pool, abs, [(-i,) for i in range(4)])
    assert sorted(value for _, value in finished) == [0, 1, 2, 3]


def drain_with_wait(pool: Executor) -> None:
    """The arena's old loop, through ``concurrent.futures.wait``: not safe to interrupt."""
    pending = {pool.submit(abs, -i) for i in range(4)}
    while pending:
        done, pending = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            future.result()


def signalled_at(opcode: int, drain: Any) -> bool | None:
    """Drain a fresh pool, SIGTERM's handler called at its ``opcode``-th bytecode.

    Returns None if the drain ended sooner, else whether it ended cleanly:
    with the handler's ``SystemExit``, the pool still able to shut down (a lock
    left held by the main thread blocks the pool's threads).  Weak reference
    callbacks are skipped: CPython drops any exception raised in them.
    """
    pool = ThreadPoolExecutor(2)
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode" and not frame.f_code.co_filename.endswith(WEAKREF_FILES):
            count += 1
            if count == opcode:
                worker_pool._exit(signal.SIGTERM, frame)
        return tracer

    sys.settrace(tracer)
    try:
        drain(pool)
    except BaseException as exc:
        raised: BaseException | None = exc
    else:
        raised = None
    finally:
        sys.settrace(None)
    if raised is None:
        assert count < opcode, "the handler's exit was lost"
        pool.shutdown()
        return None
    assert (worker_pool._deferring, worker_pool._deferred) == (0, None)
    closing = threading.Thread(target=pool.shutdown, daemon=True)
    closing.start()
    closing.join(JOIN_BOUND)
    exited = isinstance(raised, SystemExit) and raised.code == 128 + signal.SIGTERM
    return exited and not closing.is_alive()


def every_moment(drain: Any) -> list[bool]:
    """:func:`signalled_at` each bytecode of ``drain`` in turn, to the first unclean end.

    The garbage collector is off throughout (after one collection): no finalizer
    may run in a drain, as CPython drops an exception raised in one too.  Once,
    not per drain: a collection of the suite's heap costs far more than a drain.
    """
    outcomes: list[bool] = []
    gc.collect()
    gc.disable()
    try:
        for opcode in range(1, 100_000):  # bounded; a drain takes a few thousand
            outcome = signalled_at(opcode, drain)
            if outcome is None:
                return outcomes
            outcomes.append(outcome)
            if not outcome:
                return outcomes  # a stuck pool's threads stay blocked: stop there
    finally:
        gc.enable()
    raise AssertionError("the drain never ended")


@pytest.fixture
def unarmed(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The handler's exit deadline recorded instead of armed (it would end pytest)."""
    armed: list[float] = []
    monkeypatch.setattr(faulthandler, "dump_traceback_later", lambda t, **_: armed.append(t))
    monkeypatch.setattr(worker_pool, "_exit_armed", False)
    return armed


@pytest.mark.slow
def test_a_signal_at_any_moment_of_draining_leaves_the_pool_able_to_shut_down(
    unarmed: list[float],
) -> None:
    outcomes = every_moment(drain)
    assert len(outcomes) > 100 and all(outcomes)
    assert unarmed == [worker_pool.EXIT_GRACE]  # the first signal's deadline, never put off


def test_the_old_loop_through_wait_could_end_uncleanly() -> None:
    """The check above can fail: the arena's former loop, so interrupted, ends uncleanly.

    In a child process that leaves with ``os._exit``: a pool stuck by a held
    lock keeps threads that the interpreter's exit would wait for forever.
    """
    program = (
        "import os, faulthandler\n"
        "faulthandler.dump_traceback_later = lambda *a, **k: None\n"
        "from test_worker_pool import drain_with_wait, every_moment\n"
        "print(every_moment(drain_with_wait)[-1], flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=Path(__file__).parent,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        capture_output=True,
        text=True,
        timeout=600,  # bounded; it takes seconds
    )
    assert done.stdout.split() == ["False"], done.stderr


CHILD = """
import os, signal, sys, threading
from agents.infra import worker_pool
worker_pool.EXIT_GRACE = {grace}
worker_pool.exit_on_signals()
# A thread that never ends: the interpreter's exit would wait for it forever.
threading.Thread(target=threading.Event().wait, name="stuck").start()
os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.slow
def test_a_signalled_process_that_cannot_exit_is_ended_after_the_grace() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(grace=1.0)],
        capture_output=True,
        text=True,
        timeout=120,  # far beyond the grace: only a missing deadline reaches it
    )
    assert done.returncode == 1
    assert "Timeout (0:00:01)!" in done.stderr and "most recent call first" in done.stderr
