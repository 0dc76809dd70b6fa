"""The ACL check of the fault scenarios run on the secured ZooKeeper: once a scenario is over,
every znode of its chroot (whoever created it, before, during or after the faults) carries
Kafka's ACLs, as a cluster run with ``zookeeper.set.acl`` gives them."""

from __future__ import annotations

import contextlib

from reassignd.zk.client import ZkClient
from reassignd.zk.errors import NoNodeError
from tests.integration.secured_helpers import kafka_acls

# znodes every scenario's cluster has created by its end: the walk cannot pass on an empty tree
EXPECTED = frozenset({"/", "/brokers/ids", "/brokers/topics", "/controller_epoch", "/config/brokers"})


async def acls_of_tree(zk: ZkClient, root: str = "/") -> dict[str, str | None]:
    """Every znode under ``root`` (``zk``'s chroot): None when its ACLs are Kafka's, else what
    they are. A znode gone while it is walked (an ephemeral one) is left out."""
    found: dict[str, str | None] = {}
    with contextlib.suppress(NoNodeError):
        acls, _ = await zk.get_acl(root)
        found[root] = None if acls == kafka_acls(root) else str(acls)
        for child in sorted(await zk.children(root)):
            found.update(await acls_of_tree(zk, f"{root.rstrip('/')}/{child}"))
    return found


async def assert_kafka_acls(zk: ZkClient) -> int:
    """Every znode of ``zk``'s chroot carries Kafka's ACLs; the number of znodes checked."""
    found = await acls_of_tree(zk)
    assert set(found) >= EXPECTED, f"not in the tree: {sorted(EXPECTED - set(found))}"
    wrong = {path: acls for path, acls in found.items() if acls is not None}
    assert not wrong, f"znodes without Kafka's ACLs: {wrong}"
    return len(found)
