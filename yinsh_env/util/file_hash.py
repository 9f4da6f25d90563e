"""The sha256 of a file: read in chunks, and only of a regular file.

Manifests, the results database and the init-weights record hash files that
a user names.  Reading a whole file at once runs out of memory on a large
one; a symlink to ``/dev/zero`` never ends; a FIFO blocks.  So
:func:`file_sha256` opens the path (without blocking), checks that what it
opened is a regular file, and reads it in :data:`CHUNK` bytes at a time.
"""

from __future__ import annotations

import hashlib
import os
import stat

#: Bytes read at a time.
CHUNK = 1 << 20


class NotARegularFile(ValueError):
    """A path to hash that is a folder, a device, a pipe or a socket (or links to one)."""


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of the regular file at ``path`` (symlinks followed).

    Raises :class:`NotARegularFile` naming ``path`` for anything else, and the
    ``OSError`` of opening it for a missing or unreadable file.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        raise NotARegularFile(f"{os.fspath(path)} is not a regular file ({kind}): not hashed")
    with os.fdopen(fd, "rb", buffering=0) as handle:
        digest = hashlib.sha256()
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
