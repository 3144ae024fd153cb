"""The cyclic garbage collector, set for a process that judges or stores spans.

Judging and row shaping allocate many short-lived containers that rarely form cycles: at
the default threshold (700 allocations) the collector took about 12% of judging time
(measured on the ingest benchmark's turns), at 50,000 about 1%. In the service process
the same held for storing spans and reading the judge worker's results: with the setting
below the ingest benchmark's stored spans/s went from 6,111-6,320 to 7,011-7,559 and the
thread reading the worker's results from 1.6 to 1.2-1.3 CPU seconds (docs/performance.md).
Reference counting still frees everything that forms no cycle at once; cycles are found
as before, less often.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 10, 10)
"""Allocations before a young collection, and young collections before each older one."""


def tune_collector() -> None:
    """Call once the process has started: what is alive then (modules, compiled rules, the
    service's own objects) is never garbage, so it leaves every later collection
    (`gc.freeze`), and the collector runs at `THRESHOLDS`."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
