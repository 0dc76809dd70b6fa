"""How many examples a property test draws: its whole budget in the deep run, half in the default.

The default run (`bash scripts/test.sh`, CI) draws half of each property test's examples, at least
25: the same properties over the same strategies, searched less deeply on each run (outside the
derandomized state machine, each run draws new examples, so CI's runs add up). The deep run,
``REASSIGND_DEEP_PROPERTIES=1 bash scripts/test.sh --unit``, draws every example, as before a release
or after changing a codec, the door or the controller's core.
"""

from __future__ import annotations

import os

DEEP = os.environ.get("REASSIGND_DEEP_PROPERTIES", "") == "1"
_LEAST = 25


def examples(budget: int) -> int:
    """The examples to draw of a property test whose whole budget is ``budget``."""
    return budget if DEEP else max(min(budget, _LEAST), budget // 2)
