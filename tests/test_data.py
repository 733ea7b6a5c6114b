"""The benchmark tables in ``data/`` are the bytes ``data/checksums.sha256`` names, and nothing else.

The experiments, the benchmarks and the golden releases read these files; ``data/README.md``
gives their provenance and licence. A table that changed by one byte would change every
result computed from it, so the repository's copy is checked against the recorded sha256.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
CHECKSUMS = DATA / "checksums.sha256"
NOT_DATA = {"README.md", "checksums.sha256"}


def recorded() -> dict[str, str]:
    """File name -> sha256 from the ``sha256sum`` file (``<hex>  <name>`` per line)."""
    entries = {}
    for line in CHECKSUMS.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            entries[name.lstrip("*")] = digest
    return entries


def test_every_data_file_has_a_checksum_and_every_checksum_a_file():
    present = {path.name for path in DATA.iterdir() if path.is_file()} - NOT_DATA
    assert present == set(recorded())


@pytest.mark.parametrize("name", sorted(recorded()))
def test_a_data_file_has_its_recorded_sha256(name):
    assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == recorded()[name]


def test_the_readme_gives_every_file_and_its_sha256():
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    for name, digest in recorded().items():
        assert f"`{name}`" in readme and digest in readme, name
