"""The command line as a user runs it: ``python -m reassignd ...`` in a process of its own, with no
``REASSIGND_*`` variable of the test's environment leaking in."""

from __future__ import annotations

import os
import subprocess
import sys


def reassignd(
    *args: str, env: dict[str, str] | None = None, module: str = "reassignd"
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m MODULE ARGS`` (``env`` added to the cleaned environment) and return what it
    printed and its exit code; a bound of 60 s for a hang."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REASSIGND_")}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
        check=False,
    )
