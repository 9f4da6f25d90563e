"""run_archive hashes only regular files, in chunks, and writes through the one writer."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from train.tools.run_archive import main as archive_main
from train.tools.run_archive import save

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_restore_refuses_a_checkpoint_that_links_to_a_device(
    tiny_run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "archive"
    manifest = save(tiny_run_dir, archive)
    name = sorted(manifest["files"])[-1]
    (archive / name).unlink()
    (archive / name).symlink_to("/dev/zero")
    assert archive_main(["restore", str(archive), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"{archive / name} is not a regular file" in err and "MemoryError" not in err
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_a_manifest_through_a_symlink_stays_a_link(tiny_run_dir: Path, tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    save(tiny_run_dir, archive)
    kept = tmp_path / "kept.json"
    shutil.move(archive / "archive.json", kept)
    (archive / "archive.json").symlink_to(kept)
    save(tiny_run_dir, archive)
    assert (archive / "archive.json").is_symlink()
    assert json.loads(kept.read_text())["files"]
