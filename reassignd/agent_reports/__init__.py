"""What the broker agents report (``GET /replicas``) and what is computed from it: fetching the
reports, each move's byte-level progress, a batch's inputs to its status, the statuses kept for
``/metrics``, and the periodic progress and stuck-move records."""
