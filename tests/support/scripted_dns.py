"""A DNS that lies, for tests: names answered from a JSON file, read at every lookup.

``ScriptedDNSResolver`` is :class:`crawler.net.resolver.GuardedResolver` whose
*lookup* answers the names listed in the JSON object file named by the
environment variable ``SCRIPTED_DNS_FILE`` (``{"canary.test": "127.0.0.2"}``)
and asks the system for the others. The guard is the real one: what this
shows is how a worker behaves when a name resolves, at connection time, to an
address the network rule refuses (DNS rebinding), although the middleware's
own look-up (the system resolver, which knows nothing of these names) saw no
private address. Start a worker with::

    SCRIPTED_DNS_FILE=answers.json scrapy crawl ecommerce \\
        -s TWISTED_DNS_RESOLVER=tests.support.scripted_dns.ScriptedDNSResolver
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from twisted.internet import defer

from crawler.net.resolver import GuardedResolver

ENV = "SCRIPTED_DNS_FILE"


class ScriptedDNSResolver(GuardedResolver):
    def lookup(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        path = os.environ.get(ENV)
        answers = json.loads(Path(path).read_text()) if path else {}
        if name in answers:
            return defer.succeed(str(answers[name]))
        return super().lookup(name, timeout)
