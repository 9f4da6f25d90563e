"""Output options (--record, --svg, --json ...) go through the one writer: devices
and pipes are streamed into, links written through, folders refused at parsing."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agents.evaluation.eval_cli import main as eval_main
from agents.infra.cli_args import PathError, output_file
from agents.play.play_cli import main as play_main


def test_a_device_or_a_pipe_is_a_valid_output(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody reads it yet: the write will wait for its reader
    read_end, write_end = os.pipe()
    try:
        for text in ("/dev/null", str(fifo), f"/proc/self/fd/{write_end}"):
            assert output_file()(text) == Path(text)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_a_folder_or_a_link_to_one_is_refused_before_any_work(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    for text in (str(tmp_path), str(link)):
        with pytest.raises(PathError, match="is a folder"):
            output_file()(text)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_record_to_a_full_device_names_it_and_leaves_the_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert play_main(["random", "random", "--quiet", "--seed", "1", "--record", "/dev/full"]) == 1
    assert "cannot write /dev/full: No space left on device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_json_to_a_full_device_names_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["random", "random", "--games", "2", "--json", "/dev/full"]) == 1
    assert "cannot write /dev/full: No space left on device" in capsys.readouterr().err


def test_a_record_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    target, link = tmp_path / "target.yinsh", tmp_path / "link.yinsh"
    link.symlink_to(target)
    svg_target, svg_link = tmp_path / "board.svg", tmp_path / "link.svg"
    svg_target.write_text("old")
    svg_link.symlink_to(svg_target)
    argv = ["random", "random", "--quiet", "--seed", "1", "--record", str(link)]
    assert play_main([*argv, "--svg", str(svg_link)]) == 0
    assert link.is_symlink() and svg_link.is_symlink()
    assert target.read_text().startswith("[") and svg_target.read_text().startswith("<svg")


def test_a_record_to_dev_stdout_is_printed_into_a_pipe() -> None:
    code = "from agents.play.play_cli import main; raise SystemExit(main())"
    argv = ["random", "random", "--quiet", "--seed", "1", "--record", "/dev/stdout"]
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert '[White "random"]' in done.stdout and "plies)" in done.stdout
