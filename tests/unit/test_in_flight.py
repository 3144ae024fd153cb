"""The fair shares of the bodies in flight (collector.ingest.in_flight), by calling the
budget with literals: bytes counted as they arrive, and the request past its share
refused, or made to give way, when the bound is reached."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from factledger.collector.ingest.in_flight import InFlightBytes
from factledger.collector.refusals import BodiesInFlight


def test_a_request_alone_gets_every_byte_it_sends() -> None:
    budget = InFlightBytes(100)
    share = budget.share("alpha")
    share.take(80)
    share.take(80)
    assert budget.held == 160
    share.release()
    assert budget.held == 0


def test_the_request_past_its_share_is_refused_and_the_other_keeps_its_bytes() -> None:
    budget = InFlightBytes(100)
    holder, newcomer = budget.share("alpha"), budget.share("beta")
    holder.take(40)
    newcomer.take(50)
    with pytest.raises(BodiesInFlight):
        newcomer.take(20)  # 70 > its share of 50
    assert (holder.amount, newcomer.amount, holder.evicted) == (40, 50, False)


@pytest.mark.parametrize("tenant", ["alpha", "beta"], ids=["same-tenant", "other-tenant"])
def test_a_request_within_its_share_makes_the_one_past_its_share_give_way(tenant: str) -> None:
    budget = InFlightBytes(100)

    async def stalled_hog() -> str:
        hog = budget.share("alpha")
        hog.take(90)
        try:
            await asyncio.sleep(60)  # a client that stopped sending
        except asyncio.CancelledError:
            return f"given way, evicted={hog.evicted}, holding {hog.amount}"
        return "kept"

    async def scenario() -> tuple[str, int]:
        hog = asyncio.create_task(stalled_hog())
        await asyncio.sleep(0)
        budget.share(tenant).take(30)
        return await hog, budget.held

    # In a thread of its own: an earlier test of the same run may leave a loop running on
    # this one (Playwright's sync API keeps its loop on the main thread).
    with ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(asyncio.run, scenario()).result(timeout=30)
    assert outcome == ("given way, evicted=True, holding 0", 30)


def test_a_request_no_longer_reading_its_body_is_never_made_to_give_way() -> None:
    budget = InFlightBytes(100)
    decoding = budget.share("alpha")
    decoding.take(90)
    decoding.reading = False
    with pytest.raises(BodiesInFlight):
        budget.share("beta").take(30)
    assert decoding.evicted is False
