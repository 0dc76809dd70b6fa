"""The values the controller is asked with and answers with: requests and results, and the
published snapshot's views. Pure: no I/O."""
