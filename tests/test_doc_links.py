"""Every relative Markdown link in the repository lands on a file, and on an anchor that file has.

For every ``*.md`` file (outside .git and other dot-directories, node_modules, *.egg-info and the
local experiment caches in experiments/results/cache), each inline link ``[text](path#anchor)``
whose path is relative must name an existing file or directory; where it carries an anchor into a
Markdown file (or is ``#anchor`` alone, into its own file), the anchor must be an explicit
``<a id="...">`` there or a heading's GitHub slug (lowercase, spaces to hyphens, punctuation but
hyphens and underscores dropped, repeated headings numbered -1, -2, ...). Links inside fenced code
blocks and inline code are not links and are not checked. Plain-text paths are not checked.
"""

from __future__ import annotations

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
