"""Every relative Markdown link in the repository lands on a file, and on an anchor that file has.

For every ``*.md`` file (outside .git and other dot-directories, node_modules, *.egg-info and the
local experiment caches in experiments/results/cache), each inline link ``[text](path#anchor)``
whose path is relative must name an existing file or directory; where it carries an anchor into a
Markdown file (or is ``#anchor`` alone, into its own file), the anchor must be an explicit
``<a id="...">`` there or a heading's GitHub slug (lowercase, spaces to hyphens, punctuation but
hyphens and underscores dropped, repeated headings numbered -1, -2, ...). Links inside fenced code
blocks and inline code are not links and are not checked. Plain-text paths are not checked here.

The maintainers' pages (README.md, docs/*.md, docs/decisions/*.md) are also checked against the
code they name: paths synthdp/...py, dotted names synthdp.module.attr, constants quoted with
their value, the names in a decision record's title, and docs/how-it-works.md's module map
(see the tests at the end).
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]

SKIP_DIR_NAMES = {"node_modules", "__pycache__", "_build"}
SKIP_DIRS = {ROOT / "experiments" / "results" / "cache"}

# Broken links that cannot be fixed by changing their target alone: (linking file, target) ->
# why. Keep it short; fix the link rather than add to it.
ALLOWED_BROKEN: dict[tuple[str, str], str] = {
}

FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) or [text](target "title"); the text may hold one level of brackets
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"<a\s[^>]*\b(?:id|name)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files() -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in SKIP_DIR_NAMES
                       and not d.endswith(".egg-info") and here / d not in SKIP_DIRS]
        found.extend(here / f for f in filenames if f.endswith(".md"))
    return sorted(found)


def prose_lines(text: str):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def slug(heading: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML tags
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    text = path.read_text(encoding="utf-8")
    found = set(HTML_ID.findall(text))
    seen: dict[str, int] = {}
    for _, line in prose_lines(text):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def broken_links(path: Path) -> list[tuple[int, str, str]]:
    broken = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        line = CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), line)  # code is not a link
        for match in LINK.finditer(line):
            target = match.group(1)
            if not target or SCHEME.match(target) or target.startswith("//"):
                continue
            file_part, _, anchor = target.partition("#")
            if file_part:
                base = ROOT if file_part.startswith("/") else path.parent
                resolved = (base / unquote(file_part.lstrip("/"))).resolve()
                if not resolved.exists():
                    broken.append((number, target, "no such file"))
                    continue
            else:
                resolved = path
            if anchor and resolved.is_file() and resolved.suffix == ".md" \
                    and unquote(anchor) not in anchors(resolved):
                broken.append((number, target, "no such anchor"))
    return broken


def test_markdown_links_land_on_existing_files_and_anchors():
    files = markdown_files()
    assert ROOT / "README.md" in files and ROOT / "docs" / "decisions" / "README.md" in files
    problems, allowed_seen = [], set()
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        for number, target, why in broken_links(path):
            if (rel, target) in ALLOWED_BROKEN:
                allowed_seen.add((rel, target))
            else:
                problems.append(f"{rel}:{number}: ({target}) {why}")
    assert not problems, f"{len(problems)} broken Markdown links:\n" + "\n".join(problems)
    stale = set(ALLOWED_BROKEN) - allowed_seen
    assert not stale, f"allowed broken links that are no longer broken (remove them): {sorted(stale)}"


def test_the_checker_sees_broken_links(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title, with `code`\n\n## Twice\n\n## Twice\n\n<a id=\"kept\"></a>\n"
                    "[ok](#a-title-with-code) [ok](#twice-1) [ok](#kept) [no](#nowhere) "
                    "[no](missing.md) `[code](missing.md)` [web](https://example.org/x.md)\n"
                    "```\n[fenced](missing.md)\n```\n", encoding="utf-8")
    assert [(target, why) for _, target, why in broken_links(page)] == [
        ("#nowhere", "no such anchor"), ("missing.md", "no such file")]


# --- The maintainers' pages' references to the code: README.md, docs/*.md, docs/decisions/*.md.
# Checked: a path synthdp/...py exists; a dotted name synthdp.module.attr imports and has the
# attribute; a module-level constant of the package quoted with a number ("`PAIR_FDR` = 0.1",
# "SELECTED_PAIRS_SHARE (0.15)") has that value in the code; a decision record's title names only
# functions, classes, attributes and constants the modules it names define; and the module map in
# docs/how-it-works.md names every module of the package (but the empty __init__.py files).

CODE_PATH = re.compile(r"(?<![\w/.-])(synthdp/[\w/]+\.py)\b")
DOTTED = re.compile(r"(?<![\w/.-])(synthdp(?:\.\w+)+)(?![\w-])")
QUOTED_CONSTANT = re.compile(r"\b([A-Z][A-Z0-9_]{2,})\b`?\s*(?:\(|=\s*)(\d[\d ]*(?:\.\d+)?)(?=[),;:\s]|$)")
TITLE_NAME = re.compile(r"([A-Za-z_]\w*)((?:\.\w+)*)(?:\((.*)\))?(?: = .*)?")


def reference_pages() -> list[Path]:
    docs = ROOT / "docs"
    return [ROOT / "README.md", *sorted(docs.glob("*.md")), *sorted((docs / "decisions").glob("*.md"))]


def _module_file(module: str) -> Path | None:
    base = ROOT / Path(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _module_tree(path: Path):
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def defined_names(path: Path) -> frozenset[str]:
    """Every name a module defines or binds: functions, classes, assignments, attributes, arguments."""
    found = set()
    for node in ast.walk(_module_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
    return frozenset(found)


@cache
def numeric_constants() -> dict[str, set[float]]:
    """UPPER_CASE module-level constants of the package whose value is a number, by name."""
    found: dict[str, set[float]] = {}
    for path in sorted((ROOT / "synthdp").rglob("*.py")):
        for node in _module_tree(path).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if not (isinstance(target, ast.Name) and re.fullmatch(r"[A-Z][A-Z0-9_]+", target.id)):
                continue
            text = ast.unparse(value)
            if not re.fullmatch(r"[\d_.\s*+/()-]+", text):  # numbers and arithmetic only
                continue
            number = eval(text, {"__builtins__": {}})  # digits and operators only
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                found.setdefault(target.id, set()).add(float(number))
    return found


def _resolves(dotted: str) -> str | None:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if _module_file(module) is None:
            continue
        if module.endswith("__main__"):
            return None if cut == len(parts) else f"{module} is not imported here"
        obj = importlib.import_module(module)
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return f"{module} has no {'.'.join(parts[cut:])}"
            obj = getattr(obj, attr)
        return None
    return "no such module"


def code_reference_problems(path: Path) -> list[str]:
    problems = []
    constants = numeric_constants()
    text = path.read_text(encoding="utf-8")
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    for number, line in prose_lines(text):
        where = f"{page}:{number}"
        for match in CODE_PATH.finditer(line):
            if not (ROOT / match.group(1)).is_file():
                problems.append(f"{where}: {match.group(1)}: no such file")
        for match in DOTTED.finditer(line):
            why = _resolves(match.group(1))
            if why:
                problems.append(f"{where}: {match.group(1)}: {why}")
        for match in QUOTED_CONSTANT.finditer(line):
            name, quoted = match.group(1), float(match.group(2).replace(" ", ""))
            if name in constants and not any(abs(quoted - v) <= 1e-9 * max(1.0, abs(v)) for v in constants[name]):
                problems.append(f"{where}: {name} quoted as {match.group(2).strip()}, "
                                f"the code has {sorted(constants[name])}")
    if path.parent.name == "decisions" and path.name != "README.md":
        title = text.splitlines()[0]
        spans = re.findall(r"`([^`]+)`", title)
        modules = [ROOT / span for span in spans if CODE_PATH.fullmatch(span) and (ROOT / span).is_file()]
        names = frozenset().union(*(defined_names(module) for module in modules))
        for span in spans:
            match = TITLE_NAME.fullmatch(span.strip())
            if not modules or not match:
                continue
            words = [match.group(1), *match.group(2).split(".")[1:], *re.findall(r"(\w+)=", match.group(3) or "")]
            for word in words:
                if word not in names and ("_" in word or word[0].isupper()):
                    problems.append(f"{page}:1: title's `{span}`: "
                                    f"{word} is not defined in {', '.join(m.name for m in modules)}")
    return problems


def test_the_pages_references_to_the_code_hold():
    pages = reference_pages()
    assert ROOT / "docs" / "how-it-works.md" in pages and len(pages) > 40
    problems = [problem for page in pages for problem in code_reference_problems(page)]
    assert not problems, f"{len(problems)} references to code that does not hold:\n" + "\n".join(problems)


def test_the_module_map_names_every_module():
    page = (ROOT / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    mapped = set(re.findall(r"`(synthdp/[\w/]+\.py)`", page.split("## Boundaries")[0]))
    modules = {path.relative_to(ROOT).as_posix() for path in (ROOT / "synthdp").rglob("*.py")}
    empty = {module for module in modules if module.endswith("/__init__.py")
             and all(isinstance(node, ast.Expr) for node in _module_tree(ROOT / module).body)}
    assert modules - empty - mapped == set(), "modules missing from docs/how-it-works.md's module map"
    assert mapped - modules == set(), "the module map names modules that do not exist"


def test_the_reference_checker_sees_drift(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("`synthdp/nowhere.py` and `synthdp/postprocess/pairs.py`; `synthdp.postprocess.pairs.nothing`"
                    " and `synthdp.postprocess.pairs.spectral_denoise`\n`PAIR_FDR` = 0.3, THRESHOLD (2 noise sd),"
                    " WDBC (569 rows)\n```\nsynthdp/fenced.py\n```\n", encoding="utf-8")
    problems = code_reference_problems(page)
    assert len(problems) == 3, problems
    assert "synthdp/nowhere.py" in problems[0] and "nothing" in problems[1] and "PAIR_FDR" in problems[2]


def test_the_title_checker_sees_drift(tmp_path):
    """A decision record's title naming a name its module no longer defines (noise-box.md's `noise_box_rows`
    until today) is a problem; the check itself failed on a page outside the repository (relative_to)."""
    (tmp_path / "decisions").mkdir()
    page = tmp_path / "decisions" / "record.md"
    page.write_text("# `tilt_box`, `noise_box_rows`, `StudyOptions.noise_box` — `synthdp/pipeline/run.py`\n",
                    encoding="utf-8")
    problems = code_reference_problems(page)
    assert len(problems) == 1 and "noise_box_rows is not defined in run.py" in problems[0], problems
