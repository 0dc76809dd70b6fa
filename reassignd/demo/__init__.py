"""The local demo (``bash scripts/demo.sh``, ``python -m reassignd.demo``): a whole reassignd cluster
on this machine, moving partitions live. ``story`` tells it; ``cluster`` runs the processes and
calls the API; ``steps`` and ``spark`` are its steps; ``plan`` and ``text`` are its pure decisions
and printing."""
