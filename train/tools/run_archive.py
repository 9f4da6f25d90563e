"""A training run kept beside the code: save a run directory's state small, restore it anywhere.

A long run is stopped and resumed many times, on other machines too, so its
state is kept in ``docs/studies/runs/NAME/``, not in the ignored ``runs/``.
An archive holds only what ``yinsh-train --resume`` and
``python -m train.tools.curve`` need::

    archive.json                     what was saved: iteration, CPU hours, files, sha256
                                     (and, for checkpoints pruned from the tree, the
                                     commit that has each: ``pruned``)
    config.yaml                      the run's config
    metrics.jsonl                    its records up to the saved iteration
    checkpoints/iter_000120.pt       the saved checkpoint (model, optimizer, RNG, history)
    checkpoints/iter_000100.pt       slim copies (network only) of the evaluated
                                     checkpoints the next evaluation plays (eval.elo_checkpoints)

No replay window (tens of MB): a run resumed from an archive restarts it empty
(:mod:`train.trainer` says so in its log and metrics) and learns again once
the window holds ``replay.min_positions``.

Git keeps an archive's text; its checkpoints stay out of git (``.gitignore``
ignores ``*.pt`` except the shipped networks), so they travel apart (a
release asset, a model hub) and the manifest's sha256 checks them when they
come back.  Checkpoints committed before that rule and pruned since are in
git's history: :func:`restore` names the commit that has each.  Usage::

    python -m train.tools.run_archive save runs/long2 docs/studies/runs/long2  # text: commit
    python -m train.tools.run_archive restore docs/studies/runs/long2 runs/long2  # anywhere
    yinsh-train --run-dir runs/long2 --resume                                # continue it
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from agents.infra.cli_args import input_dir, output_dir
from train.cpu_clock import CPU_KEY
from train.run_checkpoint import (
    CHECKPOINT_DIR,
    CheckpointError,
    atomic_copy,
    atomic_save,
    checkpoint_iteration,
    checkpoint_path,
    latest_checkpoint,
    list_checkpoints,
    read_file,
    slim_checkpoint,
)
from train.trainer import CONFIG_NAME, METRICS_NAME, RunError, read_metrics
from yinsh_env.util.atomic_write import write_atomic, write_text
from yinsh_env.util.file_hash import NotARegularFile, file_sha256

__all__ = ["restore", "save"]

MANIFEST = "archive.json"
#: A manifest lists a few checkpoints: anything larger is no manifest.
MAX_MANIFEST_BYTES = 1 << 20
_FILE = re.compile(rf"^{CHECKPOINT_DIR}/iter_\d{{6}}\.pt$")


def _sha256(path: Path) -> str:
    """A checkpoint's sha256, read in chunks; a device or a folder is a RunError naming it."""
    try:
        return file_sha256(path)
    except NotARegularFile as exc:
        raise RunError(str(exc)) from None


def _copy(source: Path, target: Path) -> None:
    """``source``'s bytes into ``target``, through the one writer (atomically)."""
    write_atomic(target, lambda tmp: shutil.copyfile(source, tmp))


def _chosen(run_dir: Path, evaluated: bool) -> tuple[Path, dict[str, Any]]:
    """The checkpoint to save: the newest, or the newest evaluated one (one file fewer)."""
    newest = latest_checkpoint(run_dir)
    if newest is None:
        raise RunError(f"cannot save: run directory {run_dir} holds no checkpoint")
    data = read_file(newest)
    if evaluated and data["history"]["evaluated"]:
        newest = checkpoint_path(run_dir, int(data["history"]["evaluated"][-1]))
        data = read_file(newest)
    return newest, data


def save(run_dir: str | Path, archive: str | Path, evaluated: bool = False) -> dict[str, Any]:
    """Write the run's state into ``archive`` (replacing what it held); its manifest."""
    run_dir, archive = Path(run_dir), Path(archive)
    for name in (CONFIG_NAME, METRICS_NAME):
        if not (run_dir / name).is_file():
            raise RunError(f"cannot save: run directory {run_dir} has no {name}")
    source, data = _chosen(run_dir, evaluated)
    iteration = int(data["iteration"])
    history = data["history"]
    elo_checkpoints = int(data["config"]["eval"]["elo_checkpoints"])
    # The next evaluation plays the newest evaluated checkpoints (train.evaluate); the
    # saved one, if among them, is already in the archive whole.
    upto = [i for i in history["evaluated"] if i <= iteration]
    ladder = [i for i in (upto[-elo_checkpoints:] if elo_checkpoints else []) if i != iteration]
    missing = [i for i in ladder if not checkpoint_path(run_dir, i).exists()]
    if missing:
        raise RunError(f"cannot save: the evaluated checkpoints {missing} are gone from {run_dir}")

    folder = archive / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    atomic_copy(source, checkpoint_path(archive, iteration))
    for i in ladder:
        atomic_save(
            slim_checkpoint(read_file(checkpoint_path(run_dir, i))), checkpoint_path(archive, i)
        )
    kept = {iteration, *ladder}
    for stale in list_checkpoints(archive):
        if checkpoint_iteration(stale) not in kept:
            stale.unlink()
    _copy(run_dir / CONFIG_NAME, archive / CONFIG_NAME)
    records = [
        r for r in read_metrics(run_dir / METRICS_NAME) if r.get("iteration", 0) <= iteration
    ]
    write_text(archive / METRICS_NAME, "".join(json.dumps(r) + "\n" for r in records))
    manifest = {
        "iteration": iteration,
        "cpu_hours": float(history.get(CPU_KEY, 0.0)) / 3600,
        "evaluated": list(history["evaluated"]),
        "saved_from": str(run_dir),
        "files": {
            str(p.relative_to(archive)): _sha256(p) for p in sorted(folder.glob("iter_*.pt"))
        },
    }
    write_text(archive / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return manifest


def _read_manifest(path: Path) -> dict[str, Any]:
    """An archive's manifest: a JSON object whose ``files`` map names to sha256 digests."""
    with open(path, "rb") as handle:  # a regular file (checked): read up to a bound
        raw = handle.read(MAX_MANIFEST_BYTES + 1)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise RunError(f"{path} is over {MAX_MANIFEST_BYTES} bytes: not a run archive's manifest")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # undecodable bytes, bad JSON, deep nesting
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise RunError(f"{path} is not a JSON manifest: {reason}") from None
    files = manifest.get("files", {}) if isinstance(manifest, dict) else None
    if (
        not isinstance(files, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
        or type(manifest.get("iteration")) is not int
    ):
        raise RunError(f"{path} is not a run archive's manifest (iteration; files: name -> sha256)")
    pruned = manifest.get("pruned", {})
    if not isinstance(pruned, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in pruned.items()
    ):
        raise RunError(f"{path}: 'pruned' must map checkpoint names to commits")
    return manifest


def _missing(archive: Path, name: str, manifest: dict[str, Any]) -> str:
    """Why an archived checkpoint is absent, and how to get it back when git has it."""
    where = archive / name
    commit = manifest.get("pruned", {}).get(name)
    if commit:
        return (
            f"{where} was pruned from the repository (checkpoints stay out of git); "
            f"commit {commit} has it: git checkout {commit} -- {where}"
        )
    return (
        f"{where} is missing (listed in {archive / MANIFEST}; fetch it from where the run's "
        "checkpoints are kept)"
    )


def restore(archive: str | Path, run_dir: str | Path) -> dict[str, Any]:
    """Copy an archive into a new run directory, ready for ``yinsh-train --resume``.

    Every file is checked before anything is written: the manifest, each
    checkpoint's sha256, that it loads and that its weights are finite
    (:class:`~train.run_checkpoint.CheckpointError` naming the file).  A checkpoint
    that is absent is a :class:`~train.trainer.RunError` naming it and, when it
    was pruned from the tree, the commit and the ``git checkout`` that bring it back.
    """
    archive, run_dir = Path(archive), Path(run_dir)
    manifest_path = archive / MANIFEST
    if not manifest_path.is_file():
        raise RunError(f"{archive} is not a run archive (no {MANIFEST})")
    manifest = _read_manifest(manifest_path)
    if list_checkpoints(run_dir):
        raise RunError(f"cannot restore into {run_dir}: it already holds checkpoints")
    files = manifest.get("files", {})
    for name in (CONFIG_NAME, METRICS_NAME):
        if not (archive / name).is_file():
            raise RunError(f"{archive} is not a whole run archive (no {name})")
    for name, digest in files.items():
        if not _FILE.match(name):
            raise RunError(f"{manifest_path}: {name!r} is not an archived checkpoint's name")
        if (archive / name).exists() and not (archive / name).is_file():
            raise RunError(f"{archive / name} is not a regular file (a folder or a device)")
        if not (archive / name).is_file():
            raise RunError(_missing(archive, name, manifest))
        if _sha256(archive / name) != digest:
            raise CheckpointError(f"{archive / name} does not match its sha256 in {manifest_path}")
        read_file(archive / name)  # loads, with finite weights (a sha256 proves neither)
    (run_dir / CHECKPOINT_DIR).mkdir(parents=True, exist_ok=True)
    for name in (*files, CONFIG_NAME, METRICS_NAME):
        _copy(archive / name, run_dir / name)
    return dict(manifest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.tools.run_archive", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sv = sub.add_parser("save", help="save a run directory's state into an archive directory")
    sv.add_argument("run_dir", type=input_dir)
    sv.add_argument("archive", type=output_dir)
    sv.add_argument(
        "--evaluated",
        action="store_true",
        help="save the newest evaluated checkpoint rather than the newest (fewer files)",
    )
    rs = sub.add_parser("restore", help="make a run directory from an archive")
    rs.add_argument("archive", type=input_dir)
    rs.add_argument("run_dir", type=output_dir)
    args = parser.parse_args(argv)
    try:
        if args.command == "save":
            manifest = save(args.run_dir, args.archive, args.evaluated)
            print(f"saved iteration {manifest['iteration']} into {args.archive}")
        else:
            manifest = restore(args.archive, args.run_dir)
            print(
                f"restored iteration {manifest['iteration']} into {args.run_dir}; continue with: "
                f"yinsh-train --run-dir {args.run_dir} --resume"
            )
    except (CheckpointError, RunError, OSError) as exc:
        print(f"train.tools.run_archive: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
