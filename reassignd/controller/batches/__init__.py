"""The batch executor inside the active controller: the shell around ``reassignd.executor``
(the runner, the journal in ZooKeeper, the throttles batches own)."""
