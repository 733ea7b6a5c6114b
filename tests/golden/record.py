"""Record the golden cases, or check them, in a process with the pinned kernels.

    python tests/golden/record.py                 record every case into records.json
    python tests/golden/record.py --check         compare every case with records.json
    python tests/golden/record.py --check a,b     only these cases
    python tests/golden/record.py --check --as-is with this environment's kernels, not the pinned ones

Both run the cases in a child process started with :func:`cases.pinned_env` (the kernels must be
chosen before numpy loads), as ``tests/test_golden.py`` does. ``--check`` keeps a changed case's
outputs under ``$TMPDIR/synthdp-golden-changed/<case>`` to compare by hand. Record only on
purpose, when a change is meant to change a release, and say so in the commit; record in the
environment of ``tests/constraints.txt`` (``pip install -e ".[test]" -c tests/constraints.txt``),
or the byte tier will apply nowhere else.

``--run NAMES --out FILE`` is the child: it runs the cases in this process and writes
{case: record or {"error": ...}} and the environment to FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES, RECORDS, available, environment, pinned_env, run_case  # noqa: E402


def run_pinned(names: list[str], keep: Path | None = None, pinned: bool = True) -> dict:
    """Run ``names`` in a child process with the pinned kernels (or, ``pinned=False``, this
    process's environment); {"environment", "cases": {name: record}}."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fresh.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--run", ",".join(names), "--out", str(out)]
        if keep is not None:
            command += ["--keep", str(keep)]
        subprocess.run(command, env={**os.environ, **(pinned_env() if pinned else {})}, check=True,
                       cwd=HERE.parents[1])
        return json.loads(out.read_text())


def child(names: list[str], out: Path, keep: Path | None) -> None:
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            try:
                results[name] = run_case(name, Path(tmp) / name)
            except Exception:  # one broken case must not hide the others' results
                results[name] = {"error": traceback.format_exc(limit=8)}
            if keep is not None:
                shutil.rmtree(keep / name, ignore_errors=True)
                if (Path(tmp) / name).exists():  # a case that failed before making its folder has none
                    shutil.copytree(Path(tmp) / name, keep / name)
    out.write_text(json.dumps({"environment": environment(), "cases": results}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", nargs="?", const="", default=None, metavar="CASES")
    parser.add_argument("--run", metavar="CASES")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--as-is", action="store_true")
    args = parser.parse_args()
    if args.run is not None:
        child(args.run.split(","), args.out, args.keep)
        return 0
    from compare import differences  # noqa: E402

    names = [name for name in (args.check.split(",") if args.check else CASES) if available(name)]
    stored = json.loads(RECORDS.read_text()) if args.check is not None else {"cases": {}}
    keep = Path(tempfile.gettempdir()) / "synthdp-golden-changed" if args.check is not None else None
    if args.as_is and args.check is None:
        parser.error("--as-is is for --check: records are made with the pinned kernels")
    fresh = run_pinned(names, keep=keep, pinned=not args.as_is)
    if args.check is None:
        failed = [name for name, record in fresh["cases"].items() if "error" in record]
        for name in failed:
            print(f"{name}: {fresh['cases'][name]['error']}")
        if failed:
            return 1
        RECORDS.write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(names)} cases in {RECORDS.name}")
        return 0
    same_env = fresh["environment"] == stored["environment"]
    print("environment:", "the recording's (byte tier on)" if same_env else "not the recording's (byte tier off)")
    failed = 0
    for name in names:
        found = list(differences(stored["cases"][name], fresh["cases"][name], bytes_too=same_env))
        failed += bool(found)
        print(f"{name}: {'ok' if not found else 'CHANGED (outputs kept in ' + str(keep / name) + ')'}")
        for line in found[:10]:
            print("   ", line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
