"""The command line and the package in a user's environment rather than the developer's: a locale
whose encoding is not UTF-8, an install whose folders it may not write. Each test sets the
environment in a child process, so that it holds on any machine that runs the suite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _c_locale() -> dict[str, str]:
    """The environment of a user in the C locale with Python's UTF-8 mode off: ASCII standard streams and
    default file encoding (in the C locale Python turns UTF-8 mode on by itself unless told not to)."""
    kept = {name: value for name, value in os.environ.items()
            if not name.startswith(("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONCOERCECLOCALE"))}
    return {**kept, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
            "PYTHONPATH": os.pathsep.join([ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_a_table_with_accents_is_printed_and_written_in_utf8_whatever_the_locale(tmp_path):
    """marginal's table to a file and to standard output is the same UTF-8 text in the C locale with UTF-8
    mode off: both were a traceback (UnicodeEncodeError) there, and in a Latin-1 locale the file was Latin-1,
    where every table synthdp writes is UTF-8."""
    env = _c_locale()
    probe = subprocess.run([sys.executable, "-c", "import locale, sys; print(sys.stdout.encoding, "
                            "locale.getpreferredencoding(False))"], env=env, capture_output=True, text=True)
    if "utf" in probe.stdout.lower():
        pytest.skip(f"this platform's C locale is UTF-8 ({probe.stdout.strip()})")
    (tmp_path / "t.csv").write_bytes("status,flag\nmarié,oui\nveuf,non\nmarié,non\ncélibataire,oui\n".encode())
    (tmp_path / "s.json").write_text(json.dumps({"columns": {
        "status": {"type": "categorical", "levels": ["célibataire", "marié", "veuf"]},
        "flag": {"type": "binary", "levels": ["non", "oui"]}}}))
    command = [sys.executable, "-m", "synthdp", "marginal", "--table", "t.csv", "--schema", "s.json",
               "--columns", "status,flag"]
    printed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True)
    written = subprocess.run([*command, "-o", "m.csv"], cwd=tmp_path, env=env, capture_output=True)
    assert printed.returncode == 0 and printed.stderr == b"", printed.stderr.decode(errors="replace")
    assert written.returncode == 0 and written.stderr == b"", written.stderr.decode(errors="replace")
    assert printed.stdout == (tmp_path / "m.csv").read_bytes()
    assert "marié,non,0.25" in printed.stdout.decode("utf-8")


def test_the_compiled_kernels_run_where_numba_cannot_write_its_cache(tmp_path):
    """An install in a folder its user cannot write (a system's site-packages, a container image run as
    another user), with a home, XDG_CACHE_HOME and NUMBA_CACHE_DIR it cannot write either: numba finds no
    folder for its cache, and a large table's first pass was a traceback (RuntimeError: cannot cache function).
    The kernels are compiled in the process instead. (Folders no one can write, even root: a file where each
    would be made.)"""
    pytest.importorskip("numba")
    from synthdp.stats import _numba_kernels

    package = tmp_path / "installed"
    package.mkdir()
    shutil.copy(_numba_kernels.__file__, package / "_numba_kernels.py")
    (package / "__pycache__").write_text("")  # numba's cache beside the source: no folder can be made there
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    env = {**os.environ, "HOME": str(blocked / "home"), "XDG_CACHE_HOME": str(blocked / "cache"),
           "NUMBA_CACHE_DIR": str(blocked / "numba")}
    code = textwrap.dedent("""
        import sys, numpy as np
        sys.path.insert(0, sys.argv[1])
        import _numba_kernels
        counts = np.zeros((1, 2), dtype=np.int64)
        _numba_kernels.cell_counts(np.array([[0, 1, 1]]), counts)
        print(counts.tolist())
    """)
    ran = subprocess.run([sys.executable, "-c", code, str(package)], env=env, capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout == "[[1, 2]]\n", ran.stderr[-2000:]
