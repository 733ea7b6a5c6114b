"""Stage timings and the progress display on stderr."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm


class StageTracker:
    """Times named stages; shows a progress bar over them on stderr unless quiet.

    The bar appears only once a run has taken more than a second (short runs stay silent)
    and names the running stage, so a user sees where a long run spends its time; the
    timings go into the report.
    """

    def __init__(self, stage_names: list[str], quiet: bool = True) -> None:
        self.timings: dict[str, float] = {}
        self._bar = tqdm(
            total=len(stage_names), desc="synthdp", unit="stage", file=sys.stderr,
            disable=quiet, leave=False, delay=1.0, bar_format="{desc}: {n_fmt}/{total_fmt} stages |{bar}| {elapsed}",
        )

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        # the description as given (set_description adds ": ", which the bar format adds again); redrawn
        # at once only where the bar is shown already (no display before the delay: tqdm would not clear it),
        # so it names the running stage, not the one before
        shown = getattr(self._bar, "last_print_n", 0) > 0  # (a disabled bar has none)
        self._bar.set_description_str(f"synthdp [{name}]", refresh=shown)
        start = time.perf_counter()
        try:
            yield
        finally:
            again = name in self.timings
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
            if not again:  # a stage run twice (a tilt before and after the LP fit) counts once, as its timing does
                self._bar.update(1)

    def close(self) -> None:
        self._bar.close()
