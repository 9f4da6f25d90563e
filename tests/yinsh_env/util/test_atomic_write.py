"""The one writer: regular files replaced atomically, links written through,
devices and pipes written as streams and never replaced, folders refused; and the
writer of names a program picks in a folder: created, never replacing nor following."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest

from yinsh_env.util.atomic_write import (
    write_atomic,
    write_bytes,
    write_file,
    write_new_file,
    write_new_text,
    write_text,
)


def _fails_half_way(handle: object) -> None:
    handle.write(b"half")  # type: ignore[attr-defined]
    raise SystemExit(143)


def test_a_regular_file_is_replaced_and_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    path.chmod(0o640)
    write_text(path, "new")
    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_an_interrupted_write_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old")
    with pytest.raises(SystemExit):
        write_file(path, _fails_half_way)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    target = tmp_path / "target" / "game.yinsh"
    target.write_text("old")
    link = tmp_path / "link.yinsh"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    # the temporary lived beside the target, and is gone
    assert sorted(p.name for p in (tmp_path / "target").iterdir()) == ["game.yinsh"]


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    write_text(link, "{}")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "{}"


def test_a_fifo_is_written_as_a_stream_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_bytes(fifo, b"a record\n")
    reader.join(timeout=30)
    assert got == [b"a record\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_descriptor_link_writes_into_the_pipe_behind_it() -> None:
    read_end, write_end = os.pipe()
    try:
        write_text(f"/proc/self/fd/{write_end}", "to stdout\n")
        os.close(write_end)
        write_end = -1
        assert os.read(read_end, 100) == b"to stdout\n"
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_descriptor_link_to_a_file_appends_rather_than_replaces(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    with open(path, "w") as out:  # as a shell's `> out.txt` gives stdout
        out.write("printed\n")
        out.flush()
        write_text(f"/dev/fd/{out.fileno()}", "record\n")
        inode = os.fstat(out.fileno()).st_ino
    assert path.read_text() == "printed\nrecord\n"
    assert path.stat().st_ino == inode


def test_dev_null_stays_a_device() -> None:
    write_text("/dev/null", "nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize(
    "write", [write_text, lambda p, t: write_atomic(p, lambda tmp: tmp.write_text(t))]
)
def test_a_full_device_is_an_error_naming_it(write: object) -> None:
    with pytest.raises(OSError) as caught:
        write("/dev/full", "x" * 100)  # type: ignore[operator]
    assert caught.value.filename == "/dev/full"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_full_device_named_by_a_link_is_named_as_given(tmp_path: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    link = tmp_path / "full"
    link.symlink_to("/dev/full")
    with pytest.raises(OSError) as caught:
        write_text(link, "x")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(link)


def test_a_folder_is_refused_naming_it(tmp_path: Path) -> None:
    link = tmp_path / "to-folder"
    link.symlink_to(tmp_path)
    for path in (tmp_path, link):
        with pytest.raises(IsADirectoryError) as caught:
            write_text(path, "x")
        assert caught.value.filename == str(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["to-folder"]


def test_a_missing_folder_names_the_path_given(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "a.txt"
    with pytest.raises(FileNotFoundError) as caught:
        write_text(path, "x")
    assert caught.value.filename == str(path)


def test_a_symlink_loop_is_an_error_naming_it(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(OSError) as caught:
        write_text(loop, "x")
    assert caught.value.filename == str(loop)


def test_write_atomic_gives_a_file_name_and_streams_into_a_device(tmp_path: Path) -> None:
    path = tmp_path / "a.bin"
    write_atomic(path, lambda tmp: tmp.write_bytes(b"abc"))
    assert path.read_bytes() == b"abc"
    write_atomic("/dev/null", lambda tmp: tmp.write_bytes(b"abc"))
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another owner")
def test_a_replaced_file_keeps_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "theirs.json"
    path.write_text("old")
    os.chown(path, 1234, 2345)
    write_text(path, "new")
    assert (path.stat().st_uid, path.stat().st_gid) == (1234, 2345)


def test_a_file_this_user_may_not_write_is_refused_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "read-only.txt"
    path.write_text("old")
    monkeypatch.setattr(os, "access", lambda p, mode: False)  # as for a 0444 file, not root
    with pytest.raises(PermissionError) as caught:
        write_text(path, "new")
    assert caught.value.filename == str(path) and path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["read-only.txt"]


def test_a_new_file_is_created_whole_with_no_temporary_left(tmp_path: Path) -> None:
    path = tmp_path / "game-00000.yinsh"
    write_new_text(path, "text")
    assert path.read_text() == "text" and not path.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-00000.yinsh"]


@pytest.mark.parametrize("dangling", [False, True])
def test_a_link_at_a_new_files_name_is_refused_not_followed(tmp_path: Path, dangling: bool) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    if not dangling:
        elsewhere.write_text("keep me")
    folder = tmp_path / "games"
    folder.mkdir()
    link = folder / "game-00000.yinsh"
    link.symlink_to(elsewhere)
    with pytest.raises(FileExistsError) as caught:
        write_new_text(link, "planted")
    assert caught.value.filename == str(link)
    assert link.is_symlink()
    assert elsewhere.exists() is not dangling
    if not dangling:
        assert elsewhere.read_text() == "keep me"
    assert sorted(p.name for p in folder.iterdir()) == ["game-00000.yinsh"]


def test_an_existing_file_at_a_new_files_name_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "g.review.json"
    path.write_text("earlier run")
    with pytest.raises(FileExistsError, match="already exists"):
        write_new_file(path, lambda handle: handle.write(b"later run"))
    assert path.read_text() == "earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.review.json"]


def test_a_new_file_is_made_without_hard_links_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)  # as on a file system without hard links
    path = tmp_path / "g.png"
    write_new_file(path, lambda handle: handle.write(b"png"))
    assert path.read_bytes() == b"png"
    (tmp_path / "link.png").symlink_to(tmp_path / "target.png")
    with pytest.raises(FileExistsError):
        write_new_file(tmp_path / "link.png", lambda handle: handle.write(b"png"))
    assert not (tmp_path / "target.png").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.png", "link.png"]
