"""Token buckets on a link direction, end to end: a policer drops what exceeds its
rate (RFC 2697 §3, colour-blind, red dropped; `tc police … drop`) and a shaper with a
queue limit (`tc tbf limit`) delays up to that many bytes and drops beyond.

The expected counts come from RFC 2697's bucket rule run here, in the test, over the
datagrams' send times: the bucket starts full at depth ``CBS``, gains ``CIR / 8`` bytes
a second up to ``CBS``, and a frame of ``n`` bytes conforms when at least ``n`` bytes
of tokens are there (then they are taken).
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from conftest import TWO_HOSTS
from qoslab.backends.sim import run_tests
from qoslab.errors import InputError
from qoslab.scenario.load import loads_scenario

PAYLOAD = 1000
FRAME = PAYLOAD + 8 + 20 + 14  # metered as Linux meters skb->len: no FCS, no preamble
OFFERED_BPS = 2_000_000
RATE_BPS = 1_000_000
DURATION_S = 2

SCENARIO = (
    TWO_HOSTS.format(name="a token bucket on a->b", seed=5)
    + """[[link]]
type = "ethernet"
rate = "100 Mbps"
ends = ["a", "b"]
shaper = {{ rate = "1 Mbps", burst = {burst}, direction = "forward", action = "{action}"{queue} }}
[[test]]
method = "udp.flow"
from = "a"
to = "b"
payload = 1000
rate = "2 Mbps"
duration = "2 s"
"""
)


def run(action: str, burst: int, queue: int | None = None) -> dict:
    text = SCENARIO.format(action=action, burst=burst, queue="" if queue is None else f", queue = {queue}")
    _, (run_,) = run_tests(loads_scenario(text))
    (record,) = run_.records
    return record["metrics"]


def rfc2697_conforming(burst: int, sends: int, gap: Fraction) -> int:
    """Frames of FRAME bytes sent every ``gap`` seconds that a full bucket of ``burst``
    bytes refilled at RATE_BPS / 8 bytes a second lets through."""
    tokens, passed = Fraction(burst), 0
    for k in range(sends):
        if k:
            tokens = min(Fraction(burst), tokens + gap * RATE_BPS / 8)
        if tokens >= FRAME:
            tokens -= FRAME
            passed += 1
    return passed


def test_a_policer_passes_what_rfc_2697_lets_through_and_drops_the_rest():
    burst = 5 * FRAME
    m = run("police", burst)
    gap = Fraction(FRAME * 8, OFFERED_BPS)  # the method sends at the offered rate
    sends = m["sent"]
    assert sends == pytest.approx(DURATION_S / gap, abs=1)
    want = rfc2697_conforming(burst, sends, gap)
    # Within one frame: the first datagram waits for ARP, which shifts its send time.
    assert abs(m["received"] - want) <= 1, (m["received"], want)
    # About half the offered load passes: the bucket's rate is half of it.
    assert m["throughput_mbps"] == pytest.approx(RATE_BPS / 1e6 * (1 + burst * 8 / (RATE_BPS * DURATION_S)), rel=0.02)
    # A policer delays nothing: a passed frame sees an empty line.
    assert m["latency_max_ms"] < 1.0


def test_a_shaper_with_a_queue_limit_delays_at_most_that_queue_and_drops_beyond():
    queue = 8 * FRAME
    m = run("shape", FRAME, queue)
    # Every frame that waits waits behind at most `queue` bytes drained at the rate, plus
    # its own serialization (first preamble bit to last FCS bit) on the 100 Mb/s line.
    bound_ms = (queue * 8 / RATE_BPS + (FRAME + 8 + 4) * 8 / 100e6) * 1e3
    assert m["latency_max_ms"] <= bound_ms + 1e-6
    assert m["latency_max_ms"] > 0.5 * bound_ms  # the queue did fill: the load is twice the rate
    # Losses: what neither the rate nor the queue can hold; every accepted frame arrives.
    carried = (RATE_BPS / 8 * DURATION_S + FRAME + queue) / FRAME
    assert m["received"] == pytest.approx(carried, abs=2)
    assert m["lost"] == m["sent"] - m["received"]


def test_a_shaper_without_a_queue_limit_loses_nothing_but_delays_more():
    m = run("shape", FRAME)
    assert m["lost"] == 0
    # The backlog grows at offered − rate for the whole send; the last frame waits for
    # all of it to drain at the rate: (2 − 1) Mb/s × 2 s / 1 Mb/s = 2 s (less the burst).
    backlog_s = (OFFERED_BPS - RATE_BPS) * DURATION_S / RATE_BPS
    assert m["latency_max_ms"] == pytest.approx(backlog_s * 1e3, rel=0.02)


def test_a_policer_with_a_queue_is_refused():
    with pytest.raises(InputError) as err:
        loads_scenario(SCENARIO.format(action="police", burst=3000, queue=", queue = 5000"))
    assert "a policer holds nothing back" in str(err.value) and "link[0].shaper" in str(err.value)
