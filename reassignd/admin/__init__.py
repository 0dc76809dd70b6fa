"""``reassignd admin``: command-line clients of the controller (Kafka's admin tools' shapes).

``reassign`` is ``kafka-reassign-partitions``: :mod:`.plan` and :mod:`.report` are the pure
parts (plans in, Kafka's JSON and lines out), :mod:`.api` and :mod:`.znodes` talk to the
controller and to ZooKeeper, :mod:`.reassign` runs a verb.
"""
