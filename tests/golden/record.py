"""Write ``checksums.json``: the digests of every golden case, run with the code as it is now.

    python tests/golden/record.py [--check]

``--check`` compares instead of writing (what ``tests/test_golden.py`` does, case by case), and
keeps a changed case's outputs under ``$TMPDIR/synthdp-golden-changed/<case>`` to compare by hand.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cases import CASES, CHECKSUMS, available, blas_mismatch, run_case  # noqa: E402


def main() -> int:
    check = "--check" in sys.argv
    if blas_mismatch():
        print(f"cannot {'check' if check else 'record'} here: {blas_mismatch()} (OPENBLAS_CORETYPE)")
        return 2
    stored = json.loads(CHECKSUMS.read_text()) if check else {}
    digests, failed = {}, []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in CASES:
            if not available(name):
                print(f"{name}: skipped (no input table)")
                continue
            digests[name] = run_case(name, Path(tmp) / name)
            status = "" if not check else (" ok" if stored.get(name) == digests[name] else " CHANGED")
            if status == " CHANGED":
                failed.append(name)
                kept = Path(tempfile.gettempdir()) / "synthdp-golden-changed" / name
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(Path(tmp) / name, kept)
                status += f" (outputs kept in {kept})"
            print(f"{name}:{status} {digests[name]}")
    if check:
        return 1 if failed else 0
    CHECKSUMS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
