"""Where the event loop is held: a thread that samples the loop thread's stack during a stall.

The stall watch (``stall_watch``) learns that the loop was held only when it wakes, too late to
see by what. This sampler runs on its own daemon thread: while the watch's heartbeat is late by
more than ``after_s``, it looks at the loop thread's current frame every ``period_s`` and counts
the innermost frames of our own package (a function and its caller). When the watch logs a
stall, it names the places most sampled meanwhile — the cost of a slow event, in the log, with
no profiler attached. It only reads frames (``sys._current_frames``); while nothing is held it
wakes to compare two floats.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from types import FrameType

import reassignd

PACKAGE_DIR = os.path.dirname(reassignd.__file__) + os.sep


def place(frame: FrameType | None, package_dir: str, depth: int = 2) -> str | None:
    """The innermost ``depth`` frames of ``package_dir`` in ``frame``'s stack, as
    ``module.function:line < caller.function``; None when none is ours."""
    parts: list[str] = []
    while frame is not None and len(parts) < depth:
        code = frame.f_code
        if code.co_filename.startswith(package_dir):
            module = code.co_filename[len(package_dir) :].removesuffix(".py").replace(os.sep, ".")
            parts.append(
                f"{module}.{code.co_name}:{frame.f_lineno}" if not parts else f"{module}.{code.co_name}"
            )
        frame = frame.f_back
    return " < ".join(parts) or None


class StallSampler:
    def __init__(
        self,
        thread_id: int,
        *,
        after_s: float = 0.05,
        period_s: float = 0.01,
        package_dir: str = PACKAGE_DIR,
    ) -> None:
        self._thread_id = thread_id
        self._after_s = after_s
        self._period_s = period_s
        self._package_dir = package_dir
        self._beat = time.perf_counter()
        self._lock = threading.Lock()
        self._counts: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stall-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)

    def beat(self) -> None:
        """The loop ran (the watch woke): not held now."""
        self._beat = time.perf_counter()

    def take(self, most: int = 3) -> list[tuple[str, int]]:
        """The places most sampled since the last take (and forget them)."""
        with self._lock:
            top = self._counts.most_common(most)
            self._counts.clear()
        return top

    def _run(self) -> None:
        while not self._stop.wait(self._period_s):
            if time.perf_counter() - self._beat <= self._after_s:
                continue
            where = place(sys._current_frames().get(self._thread_id), self._package_dir)
            with self._lock:
                self._counts[where or "outside reassignd (the interpreter, a library, GC)"] += 1
