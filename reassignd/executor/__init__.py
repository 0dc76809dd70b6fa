"""The batch executor's pure cores (issue 9): batches and their moves (model, submit, lifecycle),
the scheduler that picks which moves start, the journal's codec and paths, and progress views.

No I/O, no asyncio, no clock reads: time comes in as ``now_ms``. The controller's event loop
holds the batches, feeds these functions what it read, and writes what they decide.
"""
