"""A table's privacy budget across releases: a budget file that every release of the table charges.

Each ``generate``, ``fit`` or ``summarize`` spends (epsilon, delta) again; releases of one table
compose (basic composition: their epsilons and deltas add). A budget file keeps the total for a
table and refuses a release that would take it past the table's lifetime budget, before the
release reads the data. It is JSON (``FORMAT``, version 1):

    {"format": "synthdp-budget", "format_version": 1,
     "lifetime": {"epsilon": E, "delta": D}, "privacy_unit": null | COLUMN,
     "releases": [{"id", "command", "epsilon", "delta", "state": "pending" | "spent", "started",
                   "finished", "host", "pid", "pid_namespace", "privacy_unit", "differentially_private",
                   "table"},
                  ...]}

A file whose budgets are not finite numbers >= 0 (a NaN would make every release pass the check, a
negative epsilon give budget back), or whose entries have another state, is refused with one line.

A release is *reserved* before the data is read (``pending``, counted against the lifetime
budget), and marked ``spent`` as soon as its fit has released anything: when the fit succeeds
(before any output is written, so a run stopped while writing is charged), or when it fails
after a stage released (its error may carry a value computed from a noisy statistic: a plan too
large for a noisy row count). A run that fails before any stage released drops its reservation
(and the file, where the run was its first use: a refused run declares no lifetime budget);
a run killed before it was charged leaves a ``pending`` entry whose process is gone, which the
next use of the file (on the same host, in the same PID namespace) drops, since nothing of that
run left the process; an entry of another host or namespace cannot be checked: it stays counted
until removed by hand.

The file keeps the budget of one neighbouring relation, its ``privacy_unit``: rows (null), or
the units of one column, declared by its first release (a file that holds no release, or was
written before the key, takes the next release's). Releases by that unit add up; a release by
another is refused: by row in a file by unit, its epsilon by unit is up to K times larger (group
privacy); by unit in a file by rows, its epsilon by row may be up to twice its own (one row
replaced is a unit removed and one added). Each entry records whether its release was
differentially private; the report's ``budget_file`` entry counts the earlier releases that were
not (``--bounds-from-data``, ``--seed``, a report with ``--data-timings``: :func:`mark_not_private`),
since what they made public no later budget covers.

Every read-modify-write holds an exclusive lock (``fcntl.flock`` on ``PATH.lock``) and replaces
the file atomically, so two commands on one table never both pass the check on the same
remainder: the second waits for the lock, then sees the first's reservation. The empty ``PATH.lock`` stays beside the file on
purpose: a command that removed it after unlocking would let one that waited on the removed file
and one that created a new one both hold "the" lock. A budget file with a second name (a hard link)
is refused: each name would have its own lock, and the atomic replace gives only one name the new
record, so the table's budget would be kept twice. A symbolic link is followed to the file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import stat
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from synthdp.checks import delta_text, is_finite_number
from synthdp.errors import SynthDPError
from synthdp.files import read_text_file, temporary_beside

FORMAT = "synthdp-budget"
FORMAT_VERSION = 1
_SLACK = 1e-9  # relative tolerance for float sums of budgets
STATES = ("pending", "spent")  # a release's states (a stale one is a pending one whose process is gone)


@dataclass(frozen=True)
class Reservation:
    """A release's place in a budget file: charge it with :func:`charge`, or :func:`cancel` it."""

    path: Path
    id: str
    epsilon: float
    delta: float
    lifetime: tuple[float, float]
    spent_before: tuple[float, float]
    not_private_before: int = 0
    privacy_unit: str | None = None
    created: bool = False  # this reservation's first use created the file (cancel removes it again)


def lock_path(path: str | Path) -> Path:
    """The lock file of the budget file ``path`` (its target, through a link): ``PATH.lock`` beside it."""
    path = Path(os.path.realpath(path))
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: no flock, and without a lock two commands could both pass the check
        raise SynthDPError(f"budget file '{path}' cannot be locked on this system (no fcntl.flock, as on Windows): "
                           "--budget-file needs Linux or macOS; nothing was read or written") from None
    lock = lock_path(path)
    try:
        handle = open(lock, "a")
    except OSError as error:  # a read-only folder: one line naming the budget file, not "the output"
        raise SynthDPError(f"cannot lock budget file '{path}' ('{lock}'): {error.strerror or error}") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # waits while another command holds it
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read(path: Path) -> dict | None:
    if not path.exists():
        return None
    if path.is_dir():
        raise SynthDPError(f"budget file '{path}' is a folder: give the path of a budget file (or of one to create)")
    try:
        names = path.stat().st_nlink
    except OSError:
        names = 1  # unreadable: said below
    if names > 1:  # a rewrite replaces one name's file: the others would keep the old record, and its budget twice
        raise SynthDPError(f"budget file '{path}' has {names} names (hard links): a release through one would split "
                           "the table's record in two; keep one name (a symbolic link to it is fine)")
    try:
        text = read_text_file(path, "budget file")  # as written: JSON's ASCII
    except OSError as error:  # not a damaged record: one this user may not read (a group's file made private)
        raise SynthDPError(f"budget file '{path}' cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError:  # bytes that are no text: as damaged as invalid JSON
        text = ""
    try:  # arrays nested thousands deep raise a RecursionError, not a ValueError
        document = json.loads(text)
    except (ValueError, RecursionError):
        raise SynthDPError(f"budget file '{path}' is not valid JSON: if it is the table's record, restore it; else "
                           "give the path of a budget file (or of one to create)") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise SynthDPError(f"'{path}' is not a synthdp budget file")
    if document.get("format_version") != FORMAT_VERSION:
        raise SynthDPError(f"budget file '{path}' has format version {document.get('format_version')!r}; this synthdp "
                           f"reads version {FORMAT_VERSION}")
    problem = _problem(document)
    if problem:
        raise SynthDPError(f"budget file '{path}' {problem}: it was damaged or edited; restore it")
    return document


def _problem(document: dict) -> str | None:
    """What makes a budget document unusable, or None. Its budgets are checked as numbers, not only as
    fields: a NaN (which every comparison fails, so no release would be refused), a negative epsilon
    (which would give budget back), text or a flag would each make the file refuse less than it says."""
    lifetime, releases = document.get("lifetime"), document.get("releases")
    if not (isinstance(lifetime, dict) and isinstance(releases, list)
            and all(isinstance(release, dict) for release in releases)):
        return "lacks a field or has one of the wrong type"
    fields = ("id", "command", "epsilon", "delta", "state")
    if not all(key in lifetime for key in ("epsilon", "delta")) or not all(
            key in release for release in releases for key in fields):
        return "lacks a field or has one of the wrong type"
    budgets = [lifetime["epsilon"], lifetime["delta"]] + [release[key] for release in releases
                                                          for key in ("epsilon", "delta")]
    if not all(is_finite_number(value) and value >= 0 for value in budgets) or lifetime["delta"] >= 1:
        return "has an epsilon or a delta that is not a finite number >= 0, or a lifetime delta of 1 or more"
    if not (all(isinstance(release[key], str) for release in releases for key in ("id", "command"))
            and all(release["state"] in STATES for release in releases)
            and all(release.get("differentially_private") in (True, False, None)
                    and all(isinstance(release.get(key), (str, type(None))) for key in ("started", "finished",
                                                                                        "privacy_unit", "table"))
                    for release in releases)
            and isinstance(document.get("privacy_unit"), (str, type(None)))):
        return "lacks a field or has one of the wrong type"
    return None


def _write(path: Path, document: dict) -> None:
    """Replace the file atomically with ``document``, keeping its mode and group (a file a group shares
    stays shared; a new one gets what a plain open() gives, 0666 less the umask, not mkstemp's 0600). A write
    that fails (disk full, Ctrl-C) leaves the file as it was and no temporary file beside it, and is
    one line naming the budget file. The file and then its folder are synced before this returns: a
    release is charged before its first output byte, and a crash after that must not undo the charge."""
    # created as open() creates a file (0666 less the umask, which the process's other threads share: never
    # changed here), then given the budget file's own mode and group (a rename makes the writer its owner, in
    # the writer's group: the others of a shared file's group could no longer write it)
    try:
        with ExitStack() as cleanup:  # the temporary file removed however this ends (disk full, Ctrl-C)
            name = temporary_beside(path, cleanup)
            with open(name, "w") as out:
                try:
                    status = os.stat(path)
                except FileNotFoundError:
                    status = None
                if status is not None:
                    os.fchmod(out.fileno(), stat.S_IMODE(status.st_mode))
                    with contextlib.suppress(PermissionError):  # a group the writer is not in: the writer's
                        os.fchown(out.fileno(), -1, status.st_gid)
                out.write(json.dumps(document, indent=1) + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(name, path)
    except OSError as error:
        raise SynthDPError(f"cannot write budget file '{path}': {error.strerror or error}; it was left as it "
                           "was") from None
    with contextlib.suppress(OSError):  # the rename made durable too (where a folder cannot be synced: as before)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def _pid_namespace() -> str | None:
    """This process's PID namespace (Linux: a container's own), or None where it cannot be read: a
    process id means something only within its namespace."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _alive(release: dict) -> bool:
    """Whether a pending release's process may still run: on another host, or in another PID
    namespace of this host (a container with the same host name), assume so."""
    here = _pid_namespace()
    if release.get("host") != socket.gethostname() or release.get("pid_namespace", here) != here:  # (older: not kept)
        return True
    try:
        os.kill(int(release["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, TypeError, ValueError, OverflowError):  # a pid edited beyond a C int's
        return True
    return True


def _totals(document: dict) -> tuple[float, float]:
    releases = document["releases"]  # floats even where there is none (sum() of nothing is the int 0)
    return sum((float(r["epsilon"]) for r in releases), 0.0), sum((float(r["delta"]) for r in releases), 0.0)


def reserve(path: str | Path, command: str, epsilon: float, delta: float,
            lifetime_epsilon: float | None = None, lifetime_delta: float | None = None,
            privacy_unit: str | None = None, table: str | None = None) -> Reservation:
    """Reserve (``epsilon``, ``delta``) for a release in the budget file ``path``, before any data is
    read; refuse, with one line and nothing written, a release that would take the table past its
    lifetime budget. The file's first use creates it and needs ``lifetime_epsilon`` (and
    ``lifetime_delta`` for delta > 0; default 0); a later use may repeat them (they must agree) or
    leave them out. Dead pending entries of this host are dropped first (module docstring). A link
    to the file is followed: the record, its lock and its rewrites are the file's, whatever name
    reaches it (a link's own lock would let two commands pass at once, and a rewrite through it
    would replace the link with a second record). ``privacy_unit``: the release's unit column (None:
    rows), refused in a file kept by another unit (module docstring). ``table``: the path of the file
    released (None: a DataFrame), recorded with the release; one that differs from the earlier releases'
    is warned of (a budget file keeps one table's budget; a table moved or renamed is the same table)."""
    path = Path(os.path.realpath(path))
    if not path.parent.is_dir() and str(path.parent) not in ("", "."):
        raise SynthDPError(f"budget file folder '{path.parent}' " + ("is a file, not a folder" if path.parent.exists()
                                                                      else "does not exist"))
    for name, value in (("--lifetime-epsilon", lifetime_epsilon), ("--lifetime-delta", lifetime_delta)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise SynthDPError(f"{name} must be a number >= 0")
    if lifetime_delta is not None and lifetime_delta >= 1:
        raise SynthDPError("--lifetime-delta must be below 1 (a delta of 1 promises nothing)")
    first_use = (f"budget file '{path}' does not exist: its first use declares the table's lifetime budget with "
                 "--lifetime-epsilon E (and --lifetime-delta D for delta > 0)")
    # checked before the lock is taken too, so that a refused first use (or a path that is not a budget
    # file, such as the input table) leaves no lock file beside it; checked again under the lock
    if _read(path) is None and lifetime_epsilon is None:
        raise SynthDPError(first_use)
    with _locked(path):
        document = _read(path)
        created = document is None
        if document is None:
            if lifetime_epsilon is None:
                raise SynthDPError(first_use)
            document = {"format": FORMAT, "format_version": FORMAT_VERSION,
                        "lifetime": {"epsilon": float(lifetime_epsilon), "delta": float(lifetime_delta or 0.0)},
                        "privacy_unit": privacy_unit, "releases": []}
        lifetime = (float(document["lifetime"]["epsilon"]), float(document["lifetime"]["delta"]))
        if (lifetime_epsilon is not None and not math.isclose(lifetime_epsilon, lifetime[0], rel_tol=1e-12)) or (
                lifetime_delta is not None and not math.isclose(lifetime_delta, lifetime[1], rel_tol=1e-12)):
            raise SynthDPError(f"budget file '{path}' declares a lifetime budget of epsilon {lifetime[0]:g}, delta "
                               f"{delta_text(lifetime[1])}: it cannot be changed by a later release")
        document["releases"] = [r for r in document["releases"] if r["state"] == "spent" or _alive(r)]
        if not document["releases"] or "privacy_unit" not in document:  # no release yet (or an older file): declared
            document["privacy_unit"] = privacy_unit
        kept_by = document["privacy_unit"]
        if privacy_unit != kept_by:
            kept, release = (("by row" if unit is None else f"by unit '{unit}'") for unit in (kept_by, privacy_unit))
            raise SynthDPError(f"budget file '{path}' keeps the table's budget {kept}, and a release {release} would not "
                               "add up with its releases (their epsilons are in different units): release "
                               f"{kept} with it, or keep another budget file; nothing was read or written")
        spent = _totals(document)
        if spent[0] + epsilon > lifetime[0] * (1 + _SLACK) or spent[1] + delta > lifetime[1] * (1 + _SLACK):
            raise SynthDPError(
                f"the table's budget would be exceeded: epsilon {spent[0]:.4g} + {epsilon:.4g} of {lifetime[0]:.4g}, "
                f"delta {delta_text(spent[1])} + {delta_text(delta)} of {delta_text(lifetime[1])} (budget file '{path}'); "
                "nothing was read or written")
        identifier = uuid.uuid4().hex
        document["releases"].append({"id": identifier, "command": command, "epsilon": float(epsilon),
                                     "delta": float(delta), "state": "pending", "started": _now(), "finished": None,
                                     "host": socket.gethostname(), "pid": os.getpid(),
                                     "pid_namespace": _pid_namespace(), "privacy_unit": privacy_unit,
                                     "differentially_private": None, "table": table})
        others = sorted({r["table"] for r in document["releases"][:-1] if r.get("table") not in (None, table)})
        _write(path, document)
        not_private = sum(1 for r in document["releases"][:-1] if r.get("differentially_private") is False)
    if table is not None and others:  # after the lock: the reservation stands, the user is told
        warnings.warn(f"budget file '{path}' holds releases of another table file ({', '.join(others)}): a budget file "
                      "keeps one table's budget (the same table moved or renamed is fine)", UserWarning, stacklevel=3)
    return Reservation(path, identifier, float(epsilon), float(delta), lifetime, spent, not_private, privacy_unit,
                       created)


def charge(reservation: Reservation, differentially_private: bool | None = None) -> None:
    """Mark the reserved release spent, and whether it was differentially private (None: not known,
    a fit that failed): called as soon as its fit released anything (module docstring). Raises if
    the reservation is gone (the file was edited meanwhile): then no output may be written."""
    with _locked(reservation.path):
        found = _entry(reservation)
        if found is None:
            raise SynthDPError(f"budget file '{reservation.path}' lost this release's reservation; no output was "
                               "written")
        document, entry = found
        if entry["state"] != "pending":  # one reservation, one release
            raise SynthDPError(f"budget file '{reservation.path}': this reservation was charged already; reserve "
                               "again for another release")
        entry["state"], entry["finished"] = "spent", _now()
        entry["differentially_private"] = differentially_private
        _write(reservation.path, document)


def mark_not_private(reservation: Reservation) -> None:
    """Record that the charged release made public something its fit did not protect (a report with
    the times of the stages that read the data, ``data_timings``), as a fit with a caveat is recorded:
    a later release's report counts it among the earlier releases that were not differentially private.
    Raises if the reservation is gone or was not charged: then no output may be written."""
    with _locked(reservation.path):
        found = _entry(reservation)
        if found is None or found[1]["state"] != "spent":
            raise SynthDPError(f"budget file '{reservation.path}' lost this release's charge; no output was written")
        document, entry = found
        if entry.get("differentially_private") is not False:
            entry["differentially_private"] = False
            _write(reservation.path, document)


def _entry(reservation: Reservation) -> tuple[dict, dict] | None:
    """The budget file's document and this reservation's entry in it; None where the file or the entry is
    gone. Called under the file's lock."""
    document = _read(reservation.path)
    found = [] if document is None else [r for r in document["releases"] if r["id"] == reservation.id]
    return (document, found[0]) if document is not None and found else None


def cancel(reservation: Reservation) -> bool:
    """Drop the reservation of a release that failed before it was charged (nothing of it is out); a
    charged one is left as it is. A file that this reservation created and that holds no other release
    is removed: a first use that failed before it released declares nothing. Returns whether the
    release stays charged in the file."""
    with _locked(reservation.path):
        document = _read(reservation.path)
        if document is None:
            return False
        kept = [r for r in document["releases"] if not (r["id"] == reservation.id and r["state"] == "pending")]
        if reservation.created and not kept:
            # the file's first use, and nothing else reserved since: the file goes, so that a run refused
            # (a typo in its bounds) does not fix the lifetime budget it declared (its lock file stays:
            # module docstring)
            reservation.path.unlink()
        elif len(kept) < len(document["releases"]):  # a charged one stays, and the file is left as it is
            document["releases"] = kept
            _write(reservation.path, document)
        return any(r["id"] == reservation.id for r in kept)


def summary(reservation: Reservation) -> dict:
    """The report's ``budget_file`` entry: the lifetime budget, what earlier releases spent, this one,
    and the total after it (basic composition across releases)."""
    return {"path": str(reservation.path), "lifetime": {"epsilon": reservation.lifetime[0],
                                                         "delta": reservation.lifetime[1]},
            "spent_before": {"epsilon": reservation.spent_before[0], "delta": reservation.spent_before[1]},
            "this_release": {"epsilon": reservation.epsilon, "delta": reservation.delta},
            "spent_after": {"epsilon": reservation.spent_before[0] + reservation.epsilon,
                            "delta": reservation.spent_before[1] + reservation.delta},
            "composition": "basic across releases: their epsilons and deltas add",
            **({"earlier_releases_not_private": reservation.not_private_before,
                "note": "earlier releases of this table in the budget file were not differentially private (bounds "
                        "or levels from the data, a seed): what they made public no budget covers"}
               if reservation.not_private_before else {})}


def status(path: str | Path) -> dict:
    """What a budget file says, read only (``synthdp budget``): the lifetime budget, its privacy unit,
    what the charged releases spent, what live reservations hold, what remains for the next release
    (the lifetime less both, as :func:`reserve` counts them), and every release. A pending entry whose
    process is gone (on this host, in this PID namespace) is listed as ``stale``: not counted, since
    the next release drops it. ``unit_declared`` False: no release counted yet (or a file written
    before the key), so the next release declares the unit (``privacy_unit`` then None). Nothing is
    written and no lock is taken (every update replaces the file whole, so a read sees one state or
    the next)."""
    path = Path(os.path.realpath(path))
    document = _read(path)
    if document is None:
        raise SynthDPError(f"budget file '{path}' does not exist")
    entries = []
    for release in document["releases"]:
        state = release["state"] if release["state"] == "spent" or _alive(release) else "stale"
        entry = {key: release.get(key) for key in ("command", "epsilon", "delta", "started", "finished",
                                                   "privacy_unit", "differentially_private", "table")}
        # every budget a float, as synthdp writes it, though an edited file may hold an integer (1, 0)
        entries.append(entry | {"epsilon": float(entry["epsilon"]), "delta": float(entry["delta"]), "state": state})
    lifetime = (float(document["lifetime"]["epsilon"]), float(document["lifetime"]["delta"]))

    def total(state: str) -> dict:
        chosen = [entry for entry in entries if entry["state"] == state]
        return {"epsilon": sum((entry["epsilon"] for entry in chosen), 0.0),
                "delta": sum((entry["delta"] for entry in chosen), 0.0), "releases": len(chosen)}

    spent, pending = total("spent"), total("pending")
    # as reserve() keeps it: a file with no counted release (none, or stale ones only, which the next
    # release drops), or written before the key, takes the next release's unit, whatever it names
    declared = spent["releases"] + pending["releases"] > 0 and "privacy_unit" in document
    return {"path": str(path), "lifetime": {"epsilon": lifetime[0], "delta": lifetime[1]},
            "privacy_unit": document["privacy_unit"] if declared else None, "unit_declared": declared,
            "spent": spent, "pending": pending,
            "remaining": {"epsilon": max(0.0, lifetime[0] - spent["epsilon"] - pending["epsilon"]),
                          "delta": max(0.0, lifetime[1] - spent["delta"] - pending["delta"])},
            "stale": sum(1 for entry in entries if entry["state"] == "stale"),
            "not_private": sum(1 for entry in entries if entry["differentially_private"] is False),
            "composition": "basic across releases: their epsilons and deltas add", "releases": entries}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
