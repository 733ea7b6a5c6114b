"""Temporary files beside an output, for writes that land whole or not at all.

Every file synthdp writes (the synthetic table, reports and summaries, the model file, the budget
file) is written to a temporary file in the same folder and then renamed (or linked) into place,
which is atomic on one filesystem: a reader never sees half a file, and a failure leaves the old
file as it was. This module makes those temporary files, one way for all of them.
"""

from __future__ import annotations

import errno
import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from synthdp.errors import SynthDPError


def temporary_beside(final: Path | None, cleanup: ExitStack) -> Path:
    """A new, empty temporary file beside ``final`` (same filesystem, so a rename onto ``final`` is
    atomic), or in the system's temporary folder where ``final`` is None (an output written into
    rather than replaced: a pipe, /dev/stdout). Beside ``final`` its mode is what a plain ``open()``
    gives, 0666 less the umask, the mode ``final`` then has (not mkstemp's private 0600; the process's
    umask is never changed: other threads share it). In the system's temporary folder, shared with
    other users, it is 0600, readable by this user only: it is never put in place, and it may hold what
    a stream waits for (a draft schema's levels and bounds, read from the data) until it is read.
    ``cleanup`` removes it when it closes, wherever it still is: the removal is registered
    before the file is made, so a Ctrl-C or a kill between the two leaves nothing behind."""
    folder, prefix = (Path(tempfile.gettempdir()), ".synthdp-") if final is None else (final.parent, f".{final.name}.")
    mode = 0o600 if final is None else 0o666
    names: list[Path] = []

    def remove() -> None:
        for name in names:
            name.unlink(missing_ok=True)

    cleanup.callback(remove)
    while True:
        path = folder / f"{prefix}{secrets.token_hex(8)}.tmp"
        names.append(path)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
            return path
        except FileExistsError:  # another's file of that name (a chance of 2^-64): not ours to remove
            names.remove(path)


#: The most bytes read from a side file (JSON, TOML) that is not a regular file: a named pipe, a device. A
#: regular file's size bounds what it holds; a link to /dev/zero or a pipe that never ends would fill memory.
MAX_STREAM_BYTES = 256 * 2**20


def read_text_file(path: str | Path, what: str, encoding: str = "utf-8") -> str:
    """The text of the ``what`` file at ``path`` (a bounds, schema, summary, budget, config file, the
    copies' record): a regular file whole, anything else (``<(jq ...)``'s pipe, a device) up to
    :data:`MAX_STREAM_BYTES`, past which it is a one-line error naming it, not a process that reads
    until memory runs out. OSError and UnicodeDecodeError are the caller's, as ``Path.read_text``'s."""
    path = Path(path)
    if path.is_file() or not path.exists():  # a regular file (through a link too), or the caller's "absent"
        return path.read_text(encoding=encoding)
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    with open(path, "rb") as stream:
        content = bytearray()
        while len(content) <= MAX_STREAM_BYTES:
            block = stream.read(min(2**20, MAX_STREAM_BYTES + 1 - len(content)))
            if not block:
                return content.decode(encoding)
            content += block
    raise SynthDPError(f"{what} '{path}' is not a regular file and holds more than {MAX_STREAM_BYTES // 2**20} MB: "
                       f"give the path of a {what}")


def check_new(path: Path, overwrite: bool, what: str) -> None:
    """Refuse, before any work, to write the ``what`` file at ``path`` where one exists (a file, a link,
    a dangling link: anything but a folder) unless ``overwrite``, as the command line's ``--overwrite``:
    a user's file is never replaced unasked."""
    if not isinstance(overwrite, bool):
        raise SynthDPError("overwrite must be True or False")
    if not overwrite and not path.is_dir() and os.path.lexists(path):
        raise _exists(path, what)


def write_in_place(path: Path, write: Callable[[Path], object], overwrite: bool, what: str) -> None:
    """Write the ``what`` file at ``path`` whole or not at all: ``write`` fills a temporary file beside it
    (:func:`temporary_beside`), which is then renamed onto ``path`` (``overwrite``; through a link, onto
    its target, the link kept, as the command line does) or linked there, which
    fails where a file of that name appeared meanwhile (a rename would replace it; a filesystem without
    hard links falls back to a check and the rename). Errors are one line naming the file; the
    temporary file is removed however this ends."""
    check_new(path, overwrite, what)
    if path.is_dir():
        raise SynthDPError(f"cannot write the {what} '{path}': it is a folder")
    # through a link, its target is replaced and the link stays, as the command line's --overwrite does
    target = Path(os.path.realpath(path)) if overwrite and path.is_symlink() else path
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise SynthDPError(f"cannot write the {what} '{path}': its folder does not exist")
    try:
        with ExitStack() as cleanup:
            temporary = temporary_beside(target, cleanup)
            write(temporary)
            synced(temporary)
            if overwrite:
                os.replace(temporary, target)
                return
            link_new(temporary, path, _exists(path, what))
    except OSError as error:  # a full disk, a folder not writable: one line, the old file as it was
        raise SynthDPError(f"cannot write the {what} '{path}': {error.strerror or error}; nothing was "
                           "written") from None


def synced(path: Path) -> None:
    """Flush ``path``'s content to disk before it is renamed into place: after a power loss a renamed
    file could otherwise be empty, where the file it replaced was whole. A filesystem that cannot sync
    (EINVAL, ENOTSUP) is written as before; another error (EIO) is the write's. On Windows it is opened
    for writing: its fsync (_commit) fails on a read-only descriptor (EBADF)."""
    descriptor = os.open(path, os.O_RDWR if sys.platform == "win32" else os.O_RDONLY)
    try:
        os.fsync(descriptor)
    except OSError as error:
        if error.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(descriptor)


def link_new(temporary: Path, final: Path, exists: SynthDPError) -> None:
    """Put ``temporary`` in place at ``final``, which must not exist: linked there, which fails where a file
    of that name appeared meanwhile (a rename would replace it), raising ``exists``; on a filesystem without
    hard links (some network and FAT filesystems), checked and then renamed. ``temporary`` stays, for its
    cleanup to remove."""
    try:
        os.link(temporary, final)
    except FileExistsError:
        raise exists from None
    except OSError:
        if os.path.lexists(final):
            raise exists from None
        os.replace(temporary, final)


def _exists(path: Path, what: str) -> SynthDPError:
    return SynthDPError(f"the {what} '{path}' exists: pass overwrite=True to replace it, or choose another path "
                        "(nothing was written)")
