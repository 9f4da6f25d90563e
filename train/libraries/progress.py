"""Progress of a library training run: a line every 30 s, TensorBoard scalars, a bar on a terminal.

The SB3 and RLlib scripts (:mod:`train.libraries.sb3_maskable_ppo`,
:mod:`train.libraries.rllib_example`, which writes its own line after every
training iteration) report through one :class:`RunProgress`:

* a line at least every ``every`` seconds (30 by default): steps, elapsed
  time, steps per second over the whole run, the mean episode return since the
  last line, and whatever the script adds (scores against opponents, a check
  against a fixed one), so a long run never sits silent;
* TensorBoard scalars under ``log_dir`` (``tensorboard --logdir DIR``): the
  same figures against the step count;
* a tqdm progress bar over the steps (or the time limit) when the output is a
  terminal; the lines are then written above it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from agents.infra.cli_args import output_dir

#: Seconds between progress lines by default.
EVERY = 30.0


def run_log_dir(root: str | Path, name: str) -> Path:
    """``root/NAME-YYYYmmdd-HHMMSS``: one TensorBoard folder per run."""
    return Path(root) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"


def add_tensorboard_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """``--tensorboard DIR`` (``runs/tensorboard`` by default) and ``--no-tensorboard``;
    :func:`check_tensorboard_arguments` checks them after parsing and
    :func:`tensorboard_dir` reads them (a run's folder: ``DIR/NAME-TIME``)."""
    parser.add_argument(
        "--tensorboard",
        type=Path,
        default=Path("runs/tensorboard"),
        metavar="DIR",
        help=f"TensorBoard scalars go to DIR/{name}-TIME",
    )
    parser.add_argument("--no-tensorboard", action="store_true", help="write no TensorBoard files")


def checked_log_dir(parser: argparse.ArgumentParser, option: str, path: str | Path) -> Path:
    """``path`` if TensorBoard can write there (a folder, or a name one can be made
    at); otherwise the parser's one-line error naming ``option`` (exit status 2).

    Every library trainer checks its TensorBoard folder here, right after
    parsing and before it builds anything: a file such as ``/dev/null`` given
    as a folder would otherwise end, much later, in a traceback from TensorBoard.
    """
    try:
        return output_dir(str(path))
    except argparse.ArgumentTypeError as exc:
        parser.error(f"argument {option}: {exc}")


def check_tensorboard_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The folder :func:`add_tensorboard_arguments` names, checked by :func:`checked_log_dir`
    (nothing to check with ``--no-tensorboard``)."""
    if not args.no_tensorboard:
        args.tensorboard = checked_log_dir(parser, "--tensorboard", args.tensorboard)


def tensorboard_dir(args: argparse.Namespace, name: str) -> Path | None:
    """This run's TensorBoard folder (:func:`run_log_dir`) from the arguments of
    :func:`add_tensorboard_arguments`; None with ``--no-tensorboard``."""
    return None if args.no_tensorboard else run_log_dir(args.tensorboard, name)


class RunProgress:
    """Progress lines, TensorBoard scalars and a terminal bar for one run.

    Args:
        total_steps: the run's step budget (the bar's length); None: unknown.
        every: seconds between lines (0: a line at every :meth:`update`).
        log_dir: where TensorBoard scalars go; None writes none.
        bar: show a tqdm bar; None: when ``stream`` is a terminal.
        stream: where lines go (standard output by default).
        clock: the time source (a test may give a fake one).
    """

    def __init__(
        self,
        total_steps: int | None = None,
        every: float = EVERY,
        log_dir: str | Path | None = None,
        bar: bool | None = None,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if every < 0:
            raise ValueError(f"every must be at least 0 seconds, not {every!r}")
        self.every = float(every)
        self.stream = stream if stream is not None else sys.stdout
        self.clock = clock
        self.start = self._last_line = clock()
        self.steps = 0
        self._returns: list[float] = []
        self.episodes = 0
        self.writer: Any = None
        self.log_dir = Path(log_dir) if log_dir is not None else None
        if self.log_dir is not None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.log_dir))
        show = self.stream.isatty() if bar is None else bar
        self.bar: Any = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total_steps, unit="step", dynamic_ncols=True, file=self.stream, leave=False
            )

    def announce(self) -> None:
        """Write how to watch the run's scalars (nothing when it writes none)."""
        if self.log_dir is not None:
            self.write(f"TensorBoard: tensorboard --logdir {self.log_dir.parent}")

    def episode(self, episode_return: float) -> None:
        """Count a finished episode with the learner's ``episode_return``."""
        self._returns.append(float(episode_return))
        self.episodes += 1

    def due(self) -> bool:
        """Whether a line is due now (``every`` seconds since the last)."""
        return self.clock() - self._last_line >= self.every

    def update(
        self, steps: int, extra: Callable[[], Mapping[str, Any]] | None = None, force: bool = False
    ) -> str | None:
        """The run is at ``steps``: move the bar; when a line is due (or ``force``),
        write it and its scalars.

        ``extra`` is asked only then, for more parts of the line: name to a
        number (also a scalar) or to text.  Returns the line written, if any.
        """
        self.advance(steps)
        if not (force or self.due()):
            return None
        return self.line(steps, dict(extra()) if extra is not None else {})

    def advance(self, steps: int) -> None:
        """The run is at ``steps``: move the bar, write nothing."""
        if self.bar is not None and steps > self.steps:
            self.bar.update(steps - self.steps)
        self.steps = max(self.steps, steps)

    def line(self, steps: int, extra: Mapping[str, Any]) -> str:
        """Write the progress line and its scalars now; returns the line."""
        now = self.clock()
        self._last_line = now
        elapsed = now - self.start
        rate = steps / elapsed if elapsed > 0 else 0.0
        scalars: dict[str, float] = {"steps_per_second": rate}
        parts = [f"step {steps}", f"{elapsed:.0f}s", f"{rate:.0f} steps/s"]
        if self._returns:
            mean = sum(self._returns) / len(self._returns)
            parts.append(f"return {mean:+.2f} ({len(self._returns)} episodes)")
            scalars["episode_return"] = mean
            self._returns = []
        for name, value in extra.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                parts.append(f"{name} {value:.2f}")
                scalars[name] = float(value)
            else:
                parts.append(f"{name} {value}")
        text = " | ".join(parts)
        self.write(text)
        if self.writer is not None:
            for name, value in scalars.items():
                self.writer.add_scalar(f"progress/{name}", value, steps)
            self.writer.flush()
        return text

    def scalar(self, name: str, value: float, steps: int) -> None:
        """One more TensorBoard scalar (a final evaluation, a loss) at ``steps``."""
        if self.writer is not None:
            self.writer.add_scalar(name, float(value), steps)

    def write(self, text: str) -> None:
        """A line above the bar (or plain, without one)."""
        if self.bar is not None:
            self.bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        """Close the bar and the TensorBoard writer."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None
