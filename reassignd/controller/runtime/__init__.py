"""The controller instance at run time: the single consumer of the event queue (the loop and
its applier), the dispatch of each event to a part, the controller's own election, the failover
load, the end of an event (``finish``), the published snapshot, and the two kinds of failure."""
