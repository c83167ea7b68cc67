"""Wake-ups: an idle worker takes new work as soon as it arrives, not at its next look.

Every script that gives the crawl work it had none of publishes one message on
the crawl's channel ``<spider>:wake`` (Redis pub/sub; :data:`WAKE_LUA`): a push
that starts a lane of the queue (:mod:`crawler.scheduling.lanes`: a lane that
held requests already has workers busy on it), a push into the queue's sorted
set (``master recrawl``, dead letters requeued, a retry that waits), a dead
worker's requests or seeds put back, and the master's seeds. A queue whose
lanes hold requests costs no message: a crawl in full swing publishes nothing,
and a message is one command where an idle worker's look at Redis was one or
two a second.

Each worker listens on the channel with :class:`WakeUps`: a thread of its own,
on a connection of its own, blocked in a read (no command while nothing comes).
A message calls ``on_wake`` in the reactor's thread, where the scheduler makes a
starved engine ask it for requests at once (:mod:`crawler.scheduling.scheduler`):
the new work is popped within milliseconds, by every idle worker that wants some.

The channel is not a key: on a Redis Cluster a message published on any node
reaches the listeners of every node, so one listener per worker hears every
shard's pushes. A lost connection is opened again (a second later, then up to
every ``RETRY_MAX`` seconds); until it is, and for what no message announces (a
waiting retry that becomes due), the scheduler's slower idle look at Redis
(``SCHEDULER_IDLE_POLL_MAX``) is the safety net.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

logger = logging.getLogger(__name__)

WAKE_SUFFIX = ":wake"
READ_TIMEOUT = 1.0  # seconds a read waits before the thread looks whether it must stop
RETRY_MAX = 10.0  # seconds at most between two attempts to listen again

#: the message of a push into a browser queue (the plain queue's is empty): a worker
#: that renders nothing has nothing to take then, and a lane hint of the plain queue
#: stays good
BROWSER_MESSAGE = "b"

# Lua: wake(key) publishes on the channel of the crawl that ``key`` belongs to:
# its spider name (the text before the first ':') and WAKE_SUFFIX; the message says
# whether ``key`` is a browser queue (``...:browser_requests``).
WAKE_LUA = f"""
local function wake(key)
  local message = ''
  if string.find(key, 'browser_requests$') then message = '{BROWSER_MESSAGE}' end
  redis.call('PUBLISH', string.match(key, '^[^:]*') .. '{WAKE_SUFFIX}', message)
end
"""


class Wake(NamedTuple):
    """What a wake-up announces: work in the plain queue, in the browser queue, or
    both (listening began again: a message of either kind may have been missed)."""

    plain: bool
    browser: bool


PLAIN = Wake(plain=True, browser=False)
BROWSER = Wake(plain=False, browser=True)
ANY = Wake(plain=True, browser=True)


class WakeUps:
    """Listen on ``channel`` in a thread; call ``on_wake(wake)`` (in that thread) on
    each message (:data:`PLAIN` or :data:`BROWSER`), and with :data:`ANY` each time
    listening starts again after a lost connection (a message may have been missed
    meanwhile)."""

    def __init__(self, server: Any, channel: str, on_wake: Callable[[Wake], None]) -> None:
        self.server = server
        self.channel = channel
        self.on_wake = on_wake
        self._stop = threading.Event()
        self._live = threading.Event()
        self._thread: threading.Thread | None = None
        #: messages of the plain queue heard (and times listening began again): what a
        #: pop's lane hint is checked against (crawler/leasing/batch.py); written by
        #: the thread only
        self.heard = 0

    @property
    def live(self) -> bool:
        """Listening now (a message published now will be heard)."""
        return self._live.is_set()

    def start(self) -> WakeUps:
        self._thread = threading.Thread(target=self._run, name="wake-ups", daemon=True)
        self._thread.start()
        return self

    def wait_live(self, timeout: float) -> bool:
        return self._live.wait(timeout)

    def stop(self) -> None:
        """Stop listening (the thread ends within ``READ_TIMEOUT``; nobody waits for it)."""
        self._stop.set()

    def _run(self) -> None:
        retry, heard_before = 1.0, False
        while not self._stop.is_set():
            pubsub = None
            try:
                pubsub = self.server.pubsub()
                pubsub.subscribe(self.channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=READ_TIMEOUT)
                    if message is None:
                        continue
                    if message["type"] == "message":
                        if _text(message["data"]) == BROWSER_MESSAGE:
                            self.on_wake(BROWSER)
                        else:
                            self.heard += 1
                            self.on_wake(PLAIN)
                    elif message["type"] == "subscribe":  # the server listens for us now
                        self.heard += 1
                        self._live.set()
                        if heard_before:  # pushes while deaf announced nothing to this worker
                            self.on_wake(ANY)
                        heard_before, retry = True, 1.0
            except Exception as exc:  # Redis away: the idle look covers until it is back
                self._live.clear()
                logger.debug("Not listening for wake-ups (%r); again in %.0f s", exc, retry)
                self._stop.wait(retry)
                retry = min(retry * 2, RETRY_MAX)
            finally:
                self._live.clear()
                if pubsub is not None:
                    try:
                        pubsub.close()
                    except Exception:  # noqa: BLE001 - closing a broken connection
                        pass


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
