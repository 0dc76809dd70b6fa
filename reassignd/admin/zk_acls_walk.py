"""``reassignd admin zk-acls``: the walk that reads and re-sets the ACLs (the rules and the lines:
:mod:`reassignd.admin.zk_acls`, pure).

One ZooKeeper session; ``window`` workers share one stack of frames (a znode's children, in
order), so at most ``window`` requests are in flight (pipelined on the session). A worker takes
the next znode of the newest frame: the children of the znode listed last go before the rest of
its siblings (depth first). What waits in memory is the children lists (names, not paths) of the
znodes on the way down and of at most ``window`` siblings visited at once: bounded by ``window``
times the longest children list, whatever the size of the tree (100 topics of 100 partitions,
20,000 znodes: 6,400 names at most; 1,000 topics of 50, 100,000 znodes: 4,100).

Per znode: getACL; setACL with the ACL version read when the ACL is not the wanted one
(BADVERSION: someone changed it in between, so read it again and decide again); getChildren when
the stat says it has some. A znode deleted during the walk is skipped; a NOAUTH is one line
naming the znode, this session's principal and the znode's ACL, and the walk goes on. Any other
ZooKeeper failure ends the run (exit 1, one line), after the counts so far.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TextIO

import uvloop

from reassignd.admin import zk_acls
from reassignd.admin.zk_acls import AclMode, Tally, Visit
from reassignd.admin.zk_acls_command import ZkAclsSettings
from reassignd.admin.zk_session import open_session
from reassignd.errors import StartupError
from reassignd.zk.client import ZkClient
from reassignd.zk.errors import BadVersionError, NoAuthError, NoNodeError, UnimplementedError, ZkError
from reassignd.zk.values import Stat

MAX_ATTEMPTS = 5  # setACL tries on one znode whose ACL keeps changing under it


@dataclass(slots=True)
class _Frame:
    """A znode's children to visit (or the roots: Visits), in order; ``taken`` of them started."""

    parent: str
    items: list[Visit] | list[str]
    taken: int = 0


class ZkAclWalk:
    def __init__(
        self,
        zk: ZkClient,
        mode: AclMode,
        creator: tuple[tuple[str, str], ...],
        out: TextIO,
        *,
        dry_run: bool,
        window: int,
    ) -> None:
        self._zk = zk
        self._mode = mode
        self._creator = creator
        self._out = out
        self._dry_run = dry_run
        self._window = window
        self._principal = zk.settings.principal
        self._frames: list[_Frame] = []
        self._waiting = 0  # znodes named in the frames, not taken yet
        self._busy = 0
        self._wake = asyncio.Event()
        self._failure: ZkError | None = None
        self.tally = Tally()
        self.peak_waiting = 0  # the most znodes waiting to be visited at once (a test reads it)

    async def run(self, visits: tuple[Visit, ...] = zk_acls.VISITS) -> Tally:
        """Walk ``visits``; the first ZooKeeper failure other than a znode's own (NONODE, NOAUTH,
        BADVERSION) stops it: nothing new starts, the requests in flight finish, it is raised."""
        self._frames = [_Frame("", list(visits))]
        self._waiting = len(visits)
        async with asyncio.TaskGroup() as group:
            for i in range(self._window):
                group.create_task(self._worker(), name=f"zk-acls-{i}")
        if self._failure is not None:
            raise self._failure
        return self.tally

    def _take(self) -> Visit | None:
        """The next znode of the newest frame (the deepest znode's children first)."""
        while self._frames:
            frame = self._frames[-1]
            if frame.taken < len(frame.items):
                item = frame.items[frame.taken]
                frame.taken += 1
                self._waiting -= 1
                return item if isinstance(item, Visit) else Visit(f"{frame.parent}/{item}", True)
            self._frames.pop()
        return None

    async def _worker(self) -> None:
        while True:
            while (visit := self._take()) is None:
                if self._busy == 0:
                    self._wake.set()  # the walk is over: every waiting worker sees it
                    return
                self._wake.clear()
                await self._wake.wait()
            self._busy += 1
            try:
                children = await self._visit(visit)
            except ZkError as e:  # the session's, not the znode's: the walk stops
                if self._failure is None:
                    self._failure = e
                self._frames.clear()
                children = []
            finally:
                self._busy -= 1
            if children:
                self._frames.append(_Frame(visit.path.rstrip("/"), sorted(children)))
                self._waiting += len(children)
                self.peak_waiting = max(self.peak_waiting, self._waiting)
            self._wake.set()

    def _count(self, **increments: int) -> None:
        self.tally = dataclasses.replace(
            self.tally, **{name: getattr(self.tally, name) + n for name, n in increments.items()}
        )

    def _say(self, line: str) -> None:
        print(line, file=self._out)

    async def _visit(self, visit: Visit) -> list[str]:
        """Set one znode's ACL; its children's names when it has some and its subtree is walked
        (also when its own ACL could not be set, if its children can be listed)."""
        path = visit.path
        try:
            stat, failed = await self._set(path)
        except NoNodeError:
            if visit not in zk_acls.VISITS:  # a root absent is no news (Kafka's tree may lack it)
                self._count(vanished=1)
            return []
        if stat is None or not visit.recurse or stat.num_children == 0:
            return []
        try:
            return await self._zk.children(path)
        except NoNodeError:
            return []
        except NoAuthError:
            self._say(zk_acls.noauth_line(path, self._principal, None, "list the children of"))
            if not failed:
                self._count(failed=1)
            return []

    async def _set(self, path: str) -> tuple[Stat | None, bool]:
        """The znode's ACL made the wanted one: its stat (None when it could not be read) and
        whether it failed. NoNodeError when it is gone."""
        want = zk_acls.wanted(self._mode, path, self._creator)
        for _ in range(MAX_ATTEMPTS):
            try:
                current, stat = await self._zk.get_acl(path)
            except NoAuthError:
                self._say(zk_acls.noauth_line(path, self._principal, None, "read the ACL of"))
                self._count(failed=1)
                return None, True
            if not zk_acls.needs_change(current, want):
                self._count(unchanged=1)
                return stat, False
            if self._dry_run:
                self._say(zk_acls.change_line(path, current, want))
                self._count(changed=1)
                return stat, False
            try:
                stat = await self._zk.set_acl(path, zk_acls.to_set(self._mode, path), stat.aversion)
            except BadVersionError:
                continue  # its ACL changed since it was read: read it again
            except NoAuthError:
                self._say(zk_acls.noauth_line(path, self._principal, current, "set the ACL of"))
                self._count(failed=1)
                return stat, True
            self._count(changed=1)
            return stat, False
        self._say(f"Failed {path}: its ACL changed {MAX_ATTEMPTS} times while it was being set")
        self._count(failed=1)
        return stat, True


UNAUTHENTICATED_SCHEMES = frozenset({"ip"})  # ids a session has that an ``auth:`` entry never names


async def creator_ids(zk: ZkClient, settings: ZkAclsSettings) -> tuple[tuple[str, str], ...]:
    """The ids ZooKeeper resolves this session's ``auth:`` entries to: every id the server holds
    for it but its address (whoAmI, ZooKeeper 3.7+: its SASL user and its certificate's
    subject); before 3.7, its SASL user."""
    try:
        ids = await zk.who_am_i()
    except UnimplementedError:
        credentials = settings.zk_security.credentials()
        return () if credentials is None else (("sasl", credentials.user),)
    return tuple((scheme, ident) for scheme, ident in ids if scheme not in UNAUTHENTICATED_SCHEMES)


async def migrate(settings: ZkAclsSettings, out: TextIO) -> int:
    zk = await open_session(settings.zk_security, settings.zk_connect, settings.request_timeout_s, ZkError)
    try:
        creator = await creator_ids(zk, settings)
        if settings.mode is AclMode.SECURE and not creator:
            raise ZkError(
                f"--secure: ZooKeeper holds no authenticated id for this session ({zk.settings.principal})"
            )
    except BaseException:
        await zk.close()
        raise
    walk = ZkAclWalk(zk, settings.mode, creator, out, dry_run=settings.dry_run, window=settings.window)
    try:
        tally = await walk.run()
    finally:
        print(zk_acls.summary_line(settings.mode, walk.tally, dry_run=settings.dry_run), file=out)
        out.flush()
        await zk.close()
    return zk_acls.exit_code(tally)


def run_admin_zk_acls(settings: ZkAclsSettings, out: TextIO, err: TextIO) -> int:
    """Run it to its end; a failure of the run is one line on ``err`` and exit 1 (ZooKeeper
    refusing the credentials at the start is a StartupError: exit 2, by the CLI)."""
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(migrate(settings, out))
    except StartupError:
        raise  # the CLI's one line, exit 2
    except ZkError as e:
        reason = str(e)
    except KeyboardInterrupt:
        reason = "interrupted"
    out.flush()
    print(f"reassignd admin zk-acls: error: {reason}", file=err)
    return 1
