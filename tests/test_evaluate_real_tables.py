"""``synthdp evaluate --html`` on the real adult and PKS tables of data/ (issue 19): one page each,
parsed, with every column present. Skipped when the repository's data/ is missing."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from synthdp.cli import main

ROOT = Path(__file__).resolve().parents[1]


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images, self.text, self.open = 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img" and dict(attrs).get("src", "").startswith("data:image/png;base64,"):
            self.images += 1
        if tag not in ("img", "br", "meta", "hr", "link", "col", "input"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.parametrize("name", ["adult", "pks"])
def test_the_html_report_of_a_real_table(tmp_path, name, capsys):
    source = ROOT / "data" / f"{name}.csv"
    if not source.exists():
        pytest.skip("data/ is not beside the tests")
    frame = pd.read_csv(source)
    if name == "adult":
        declared = ["--schema", str(ROOT / "configs" / "adult_schema.json")]
    else:
        (tmp_path / "b.json").write_text(json.dumps({c: [float(frame[c].min()), float(frame[c].max())] for c in frame}))
        declared = ["--bounds", str(tmp_path / "b.json")]
    synthetic, report, page = tmp_path / "s.csv", tmp_path / "r.json", tmp_path / "page.html"
    assert main(["generate", str(source), "-o", str(synthetic), *declared, "--epsilon", "1", "--delta", "1e-10",
                 "--seed", "1", "--quiet", "--report", str(report)]) == 0
    assert main(["evaluate", "--real", str(source), "--synth", str(synthetic), *declared, "--queries", "20",
                 "--no-sdmetrics", "--html", str(page), "--privacy-report", str(report)]) == 0
    capsys.readouterr()
    parsed = Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    parsed.close()
    text = " ".join(parsed.text)
    assert not parsed.open and parsed.images >= frame.shape[1]
    assert all(str(column) in text for column in frame.columns)
    written = page.read_text(encoding="utf-8")
    assert "http://" not in written and "https://" not in written
