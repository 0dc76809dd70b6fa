"""The batches' statuses as last computed with the broker agents' reports, for ``/metrics``.

Whoever asks the agents anyway keeps what it computed here: the progress reporter every
``--events-progress-interval-s`` (10 s by default) and every ``GET /v1/batches``. ``/metrics``
reads only this, so a scrape never makes the controller ask an agent anything, however often
Prometheus (or anyone, the endpoint being public) scrapes. A status belongs to the controller
epoch it was computed in; another epoch's, or a batch that is no longer unfinished, is not shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reassignd.executor.progress import BatchProgress


class BatchStatusCache:
    def __init__(self) -> None:
        self._epoch: int | None = None
        self._statuses: dict[str, BatchProgress] = {}

    def store(self, epoch: int, statuses: Iterable[BatchProgress]) -> None:
        """Keep ``statuses`` (computed under ``epoch``), replacing older ones of the same batches."""
        if epoch != self._epoch:
            self._epoch, self._statuses = epoch, {}
        for status in statuses:
            self._statuses[status.batch_id] = status

    def unfinished(self, epoch: int, unfinished: Iterable[str]) -> list[BatchProgress]:
        """The kept statuses of the batches ``unfinished`` names (the snapshot's), under ``epoch``;
        forgets the others. A batch computed by nobody yet is missing until the next round."""
        if epoch != self._epoch:
            self._epoch, self._statuses = epoch, {}
            return []
        wanted = set(unfinished)
        self._statuses = {batch_id: s for batch_id, s in self._statuses.items() if batch_id in wanted}
        return [self._statuses[batch_id] for batch_id in sorted(self._statuses)]

    @property
    def statuses(self) -> Mapping[str, BatchProgress]:
        return self._statuses
