"""Temporary files beside an output, for writes that land whole or not at all.

Every file synthdp writes (the synthetic table, reports and summaries, the model file, the budget
file) is written to a temporary file in the same folder and then renamed (or linked) into place,
which is atomic on one filesystem: a reader never sees half a file, and a failure leaves the old
file as it was. This module makes those temporary files, one way for all of them.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from contextlib import ExitStack
from pathlib import Path


def temporary_beside(final: Path | None, cleanup: ExitStack) -> Path:
    """A new, empty temporary file beside ``final`` (same filesystem, so a rename onto ``final`` is
    atomic), or in the system's temporary folder where ``final`` is None (an output written into
    rather than replaced: a pipe, /dev/stdout). Its mode is what a plain ``open()`` gives, 0666 less
    the umask (not mkstemp's private 0600; the process's umask is never changed: other threads share
    it). ``cleanup`` removes it when it closes, wherever it still is: the removal is registered
    before the file is made, so a Ctrl-C or a kill between the two leaves nothing behind."""
    folder, prefix = (Path(tempfile.gettempdir()), ".synthdp-") if final is None else (final.parent, f".{final.name}.")
    names: list[Path] = []

    def remove() -> None:
        for name in names:
            name.unlink(missing_ok=True)

    cleanup.callback(remove)
    while True:
        path = folder / f"{prefix}{secrets.token_hex(8)}.tmp"
        names.append(path)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path
        except FileExistsError:  # another's file of that name (a chance of 2^-64): not ours to remove
            names.remove(path)
