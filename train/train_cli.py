"""``yinsh-train``: run or resume a self-play training run from a YAML config.

Examples::

    yinsh-train --config quick                              # a shipped config, by name
    yinsh-train --config configs/quick.yaml --run-dir runs/quick
    yinsh-train --config configs/quick.yaml --run-dir runs/q2 seed=1 search.simulations=32
    yinsh-train --run-dir runs/quick --resume              # continue where it stopped
    yinsh-train --run-dir runs/quick --resume iterations=60 # ... and train longer
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.infra.cli_args import any_path, output_dir
from agents.infra.worker_pool import exit_on_signals
from train.config import ConfigError, load_config
from train.config_files import resolve_config
from train.run_checkpoint import CheckpointError
from train.trainer import CONFIG_NAME, RunError, run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yinsh-train",
        description="AlphaZero-style self-play training for YINSH (MCTS + a PyTorch network).",
    )
    parser.add_argument(
        "--config",
        type=any_path,
        help="a YAML config file, or the name of a shipped one (quick, default, gpu, ray, long); "
        "with --resume, defaults to the run directory's config.yaml",
    )
    parser.add_argument(
        "--run-dir",
        type=output_dir,
        help="where checkpoints, metrics.jsonl, tb/ and config.yaml go "
        "(default: runs/<config name>); one holding an earlier run's files needs --resume",
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue from the run directory's latest checkpoint"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "overrides", nargs="*", metavar="key.sub=value", help="config overrides, e.g. optim.lr=1e-3"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run_dir: Path | None = args.run_dir
    config_path: Path | None = args.config
    if config_path is None:
        if not (args.resume and run_dir is not None):
            print(
                "yinsh-train: give --config FILE|NAME (or --resume with --run-dir)", file=sys.stderr
            )
            return 2
        config_path = run_dir / CONFIG_NAME
        if not config_path.is_file():
            parser.error(
                f"--resume: run directory {str(run_dir)!r} holds no {CONFIG_NAME} "
                "(nothing to resume; start a run with --config)"
            )
    if run_dir is None:
        try:
            run_dir = output_dir(str(Path("runs") / config_path.stem))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"the default --run-dir: {exc}")
    # A terminated or hung-up run exits through its cleanup (worker processes, files).
    exit_on_signals()
    try:
        config = load_config(resolve_config(config_path), args.overrides)
        last = run(config, run_dir, resume=args.resume, progress=not args.no_progress)
    except (ConfigError, CheckpointError, RunError) as exc:
        print(f"yinsh-train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"\nyinsh-train: interrupted; continue with: yinsh-train --run-dir {run_dir} --resume",
            file=sys.stderr,
        )
        return 130
    print(f"done: {last}")
    print(f"play it: yinsh-eval 'net:path={run_dir},sims=0' random")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
