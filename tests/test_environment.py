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


def _c_locale_utf8_mode() -> dict[str, str]:
    """The environment of a user in the C locale as it comes (LANG=C LC_ALL=C, no PYTHONIOENCODING), where
    Python turns its UTF-8 mode on by itself."""
    return {name: value for name, value in _c_locale().items() if name not in ("PYTHONUTF8", "PYTHONCOERCECLOCALE")}


@pytest.mark.parametrize("utf8_mode", [True, False], ids=["utf8-mode", "utf8-mode-off"])
def test_non_ascii_column_names_in_the_c_locale(tmp_path, utf8_mode):
    """A table of columns named in accents and in Japanese, in the C locale: generate writes the names into the
    CSV's header and the report as they are (UTF-8, JSON escapes), its one line on stderr, --help, and an error
    naming such a column (a bounds file without it) is one line, no traceback; stderr shows the name, or its
    escape where the locale's stderr is ASCII (UTF-8 mode off)."""
    env = {**_c_locale_utf8_mode(), "LANG": "C"} if utf8_mode else _c_locale()
    names = ["température", "年齢"]
    rows = "".join(f"{k % 40 - 5}.5,{k % 90}\n" for k in range(200))
    (tmp_path / "t.csv").write_bytes((",".join(names) + "\n" + rows).encode("utf-8"))
    (tmp_path / "b.json").write_text(json.dumps({"température": [-10, 40], "年齢": {"bounds": [0, 100],
                                                                                  "type": "integer"}}))
    (tmp_path / "one.json").write_text(json.dumps({"température": [-10, 40]}))
    command = [sys.executable, "-m", "synthdp", "generate", "t.csv", "--epsilon", "1", "--seed", "0"]
    ran = subprocess.run([*command, "-o", "out.csv", "--bounds", "b.json", "--report", "r.json"], cwd=tmp_path,
                         env=env, capture_output=True)
    assert ran.returncode == 0 and ran.stdout == b"", ran.stderr.decode(errors="replace")
    assert b"Traceback" not in ran.stderr and ran.stderr.decode("ascii").startswith("synthdp: ")
    assert (tmp_path / "out.csv").read_bytes().split(b"\n")[0] == ",".join(names).encode("utf-8")
    report = json.loads((tmp_path / "r.json").read_bytes())
    assert list(report["bounds"]["columns"]) == names
    helped = subprocess.run([*command[:4], "--help"], env=env, capture_output=True)
    assert helped.returncode == 0 and helped.stderr == b"" and b"--bounds" in helped.stdout
    refused = subprocess.run([*command, "-o", "other.csv", "--bounds", "one.json"], cwd=tmp_path, env=env,
                             capture_output=True)
    error = refused.stderr.decode("utf-8" if utf8_mode else "ascii")
    shown = "年齢" if utf8_mode else "\\u5e74\\u9f62"  # an ASCII stderr shows the name as Python escapes it
    assert refused.returncode == 2 and error.startswith(f"synthdp: error: no bounds for column '{shown}': ")
    assert error.count("\n") == 1 and not (tmp_path / "other.csv").exists()


def test_a_non_ascii_column_named_on_the_command_line_in_the_c_locale(tmp_path):
    """In the C locale with UTF-8 mode off, Python reads a non-ASCII argument as surrogate escapes: marginal
    --columns 年齢 was "'\\udce5...' is not a binary or categorical column", and so were --where, --target,
    --privacy-unit and infer's columns. They are read as UTF-8, as the tables' headers are."""
    env = _c_locale()
    (tmp_path / "t.csv").write_bytes("état,年齢\nmarié,a\nveuf,b\nmarié,b\nveuf,b\n".encode())
    (tmp_path / "s.json").write_text(json.dumps({"columns": {
        "état": {"type": "categorical", "levels": ["marié", "veuf"]}, "年齢": {"type": "binary", "levels": ["a", "b"]}}}))
    ran = subprocess.run([sys.executable, "-m", "synthdp", "marginal", "--table", "t.csv", "--schema", "s.json",
                          "--columns", "年齢,état", "-o", "m.csv"], cwd=tmp_path, env=env, capture_output=True)
    assert ran.returncode == 0 and ran.stderr == b"", ran.stderr.decode(errors="replace")
    written = (tmp_path / "m.csv").read_text(encoding="utf-8")
    assert written.startswith("年齢,état,fraction\n") and "b,veuf,0.5" in written


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
