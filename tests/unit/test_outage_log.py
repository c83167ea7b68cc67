"""``crawler.net.outage.OutageLog``: one line when a service is lost, one a minute, one
when it is back.

The clock is injected: a minute passes without anyone waiting for it.
"""

from __future__ import annotations

import copy
import logging
import threading
import time

import pytest
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError, TimeoutError

from crawler.net.outage import OutageLog, ReportingRetry, note_command, waiting_for_redis


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def outage_log(clock: Clock, interval: float = 60.0, holding: str = "holding 3 leases"
               ) -> OutageLog:
    return OutageLog(
        "Redis at 127.0.0.1:6379",
        interval=interval,
        holding=lambda: holding,
        clock=clock,
        wall=lambda: 1_700_000_000.0 + clock.now,
        ticking=False,  # the reminders come from the failures alone, on the test's clock
    )


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "crawler.net.outage"]


def test_a_warning_at_the_first_failure_then_once_a_minute_then_back(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="crawler.net.outage")
    clock = Clock()
    log = outage_log(clock)
    log.succeeded()  # no outage: nothing to say
    assert lines(caplog) == []

    log.failed(TimeoutError("Timeout reading from socket"), "waiting for its answer to GET",
               began=clock.now - 2)  # the attempt began 2 s ago: its socket timeout
    assert lines(caplog) == [
        (
            "WARNING",
            "Redis at 127.0.0.1:6379 unreachable (Timeout reading from socket): "
            "holding 3 leases; waiting for its answer to GET",
        )
    ]
    # every attempt fails for the next minute: not one line more
    for _ in range(29):
        clock.now += 2
        log.failed(TimeoutError("Timeout reading from socket"))
    assert len(lines(caplog)) == 1
    clock.now += 2  # a minute after the first line
    log.failed(ConnectionError("Error 111 connecting"), "waiting for its answer to EVALSHA")
    assert lines(caplog)[1] == (
        "WARNING",
        "Redis at 127.0.0.1:6379 still unreachable after 62 s (Error 111 connecting): "
        "holding 3 leases; waiting for its answer to EVALSHA",
    )
    clock.now += 59
    log.failed(TimeoutError("Timeout reading from socket"))
    assert len(lines(caplog)) == 2
    clock.now += 1
    log.failed(TimeoutError("Timeout reading from socket"))
    assert len(lines(caplog)) == 3 and "still unreachable after 122 s" in lines(caplog)[2][1]

    clock.now += 3.5
    log.succeeded()
    level, message = lines(caplog)[3]
    assert level == "INFO"
    assert message.startswith(
        "Redis at 127.0.0.1:6379 reachable again after 125.5 s (cut off since "
    )
    assert message.endswith("): holding 3 leases")
    log.succeeded()
    assert len(lines(caplog)) == 4 and not log.down and log.outages == 1

    # the next outage is told from its start again
    clock.now += 5
    log.failed(TimeoutError("Timeout reading from socket"))
    assert lines(caplog)[4][1].startswith("Redis at 127.0.0.1:6379 unreachable")
    assert log.outages == 2


def test_the_reminders_come_while_no_call_fails(caplog: pytest.LogCaptureFixture) -> None:
    """A call blocked longer than the interval (or no call at all): the outage's own thread
    says it again, on the real clock, until it ends."""
    caplog.set_level(logging.INFO, logger="crawler.net.outage")
    said = threading.Condition()

    def holding() -> str:
        with said:
            said.notify_all()
        return "holding 1 lease"

    log = OutageLog("Redis", interval=0.05, holding=holding)
    log.failed(TimeoutError("Timeout reading from socket"), "waiting for its answer to GET")
    with said:
        assert said.wait_for(lambda: len(lines(caplog)) >= 3, timeout=60), lines(caplog)
    reminders = lines(caplog)[1:3]
    assert all(m.startswith("Redis still unreachable after ") for _, m in reminders), reminders
    assert all(m.endswith("; waiting for its answer to GET") for _, m in reminders), reminders
    ticker = next(t for t in threading.enumerate() if t.name == "outage-log")
    log.succeeded()
    ticker.join(60)
    assert not ticker.is_alive()  # the outage is over: so are its reminders
    count = len(lines(caplog))
    assert lines(caplog)[-1][0] == "INFO"
    log.failed(TimeoutError("again"))  # a new outage: a new first line, a new ticker
    assert lines(caplog)[count][1].startswith("Redis unreachable (again)")
    log.succeeded()


def test_closing_the_log_ends_its_reminders(caplog: pytest.LogCaptureFixture) -> None:
    """A pipeline that closes while its store is away gives up on it: the outage's thread
    stops saying it (it said so for as long as the process lived)."""
    caplog.set_level(logging.INFO, logger="crawler.net.outage")
    log = OutageLog("postgres", interval=0.05)
    log.failed(ConnectionRefusedError("refused"))
    ticker = next(t for t in threading.enumerate() if t.name == "outage-log")
    log.close()
    ticker.join(60)
    assert not ticker.is_alive()
    count = len(lines(caplog))
    time.sleep(0.2)  # four intervals: a live ticker would have said it again
    assert len(lines(caplog)) == count, lines(caplog)
    assert not log.down


def test_interval_zero_says_only_lost_and_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="crawler.net.outage")
    clock = Clock()
    log = outage_log(clock, interval=0)  # no ticker either
    for _ in range(100):
        log.failed(TimeoutError("Timeout reading from socket"))
        clock.now += 10
    log.succeeded()
    assert [level for level, _ in lines(caplog)] == ["WARNING", "INFO"]
    assert "after 1000.0 s" in lines(caplog)[1][1]


def test_a_failing_holdings_function_does_not_lose_the_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="crawler.net.outage")

    def broken() -> str:
        raise KeyError("engine")

    log = OutageLog("postgres", holding=broken, clock=Clock(), ticking=False)
    log.failed("connection refused")
    assert lines(caplog)[0][1].startswith("postgres unreachable (connection refused): (what it")


def test_waiting_names_the_command_and_the_thread() -> None:
    note_command(b"EVALSHA")
    assert waiting_for_redis() == "waiting for its answer to EVALSHA (thread MainThread)"


def test_the_retry_policy_reports_each_failed_attempt_and_its_copies_share_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="crawler.net.outage")
    clock = Clock()
    retry = ReportingRetry(NoBackoff(), retries=5)
    retry.log = outage_log(clock, interval=60)
    twin = copy.deepcopy(retry)  # as redis-py copies it into each connection
    assert twin.log is retry.log and twin._backoff is not retry._backoff
    attempts = []

    def do() -> str:
        attempts.append(clock.now)
        clock.now += 30  # each attempt waits its socket timeout
        if len(attempts) < 4:
            raise TimeoutError("Timeout reading from socket")
        return "OK"

    failures: list[Exception] = []
    assert twin.call_with_retry(do, failures.append) == "OK"
    assert len(failures) == 3  # redis-py's own failure handler still runs
    # the first at the first failure, the second a minute later; the answer is the
    # client's to tell (CountingRedis), not the retry's
    assert [level for level, _ in lines(caplog)] == ["WARNING", "WARNING"]
    assert retry.log.down and retry.log.since == 1000.0  # from the first attempt's start
    retry.log.succeeded()
    assert "reachable again after 120.0 s" in lines(caplog)[2][1]


def test_errors_the_policy_does_not_retry_are_not_outages(caplog: pytest.LogCaptureFixture) -> None:
    retry = ReportingRetry(NoBackoff(), retries=5)
    retry.log = OutageLog("Redis", clock=Clock(), ticking=False)

    def do() -> str:
        raise ConnectionError("auth failed")

    with pytest.raises(ConnectionError):
        retry.call_with_retry(do, lambda error: None, is_retryable=lambda error: False)
    assert not retry.log.down


@pytest.mark.parametrize(("setting", "expected"), [(None, 30.0), ("2.5", 2.5), ("0", None)])
def test_every_redis_client_of_a_worker_waits_at_most_the_socket_timeout(
    setting: str | None, expected: float | None
) -> None:
    from scrapy.settings import Settings

    from crawler import settings as project
    from crawler.spiders.ecommerce import EcommerceSpider

    settings = Settings()
    settings.setmodule(project, priority="project")
    if setting is not None:
        settings.set("REDIS_SOCKET_TIMEOUT", setting, priority="cmdline")
    EcommerceSpider.update_settings(settings)
    params = settings.getdict("REDIS_PARAMS")
    assert params["socket_timeout"] == expected
    assert isinstance(params["retry"], ReportingRetry)  # every failed attempt is told
