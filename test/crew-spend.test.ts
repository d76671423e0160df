import { describe, expect, test } from 'vitest';
import { CrewSpend, type SpendHold } from '../main/crew/crew-spend.ts';
import { laneCost, observerCharge } from '../main/crew/lane-cost.ts';

const hold = (admitted: SpendHold | 'refused' | 'cancelled'): SpendHold => {
  if (typeof admitted === 'string') throw new Error(`expected a hold, got ${admitted}`);
  return admitted;
};

describe('the crew spend ledger', () => {
  test("should replace a call's reservation with its real cost once it ended, so a $5 cap is not spent by $0.01 calls", async () => {
    const spend = new CrewSpend(5, 0.5);
    const never = new AbortController().signal;
    // 100 calls of $0.01 each, four at a time: every one admitted, the spend is their sum.
    for (let round = 0; round < 25; round++) {
      const holds = await Promise.all([0, 1, 2, 3].map(async () => hold(await spend.admit(never))));
      expect(spend.facts().heldUsd).toBe(2);
      for (const h of holds) h.settle(0.01);
    }
    expect(spend.facts()).toEqual({ cap: 5, spentUsd: 1, heldUsd: 0, unpriced: 0, reserveUsd: 0.5 });
  });

  test('should hold a call that would pass the cap until a call in flight settles, then admit it at the room that settle left', async () => {
    // $1.10: two calls hold $1.00, a third would take the worst case to $1.50.
    const spend = new CrewSpend(1.1, 0.5);
    const never = new AbortController().signal;
    const a = hold(await spend.admit(never));
    const b = hold(await spend.admit(never));
    let third: SpendHold | 'refused' | 'cancelled' | undefined;
    const waiting = spend.admit(never).then((r) => (third = r));
    await Promise.resolve();
    expect(third).toBeUndefined();
    a.settle(0.02);
    await waiting;
    expect(typeof third).toBe('object');
    expect(spend.facts()).toMatchObject({ spentUsd: 0.02, heldUsd: 1 });
    b.settle(0.03);
    hold(third!).settle(0.04);
    expect(spend.facts()).toMatchObject({ spentUsd: 0.09, heldUsd: 0 });
  });

  test('should refuse a call only when no call is in flight and spent plus its reservation passes the cap', async () => {
    const spend = new CrewSpend(1, 0.5, { spentUsd: 0.6, unpriced: 0 });
    expect(await spend.admit(new AbortController().signal)).toBe('refused');
    expect(spend.facts().heldUsd).toBe(0);
  });

  test('should count a call whose cost stays unknown at its reservation for good, and say how many there are', async () => {
    const spend = new CrewSpend(1.2, 0.5);
    const never = new AbortController().signal;
    hold(await spend.admit(never)).settle(null);
    hold(await spend.admit(never)).settle(null);
    expect(spend.facts()).toEqual({ cap: 1.2, spentUsd: 0, heldUsd: 0, unpriced: 2, reserveUsd: 0.5 });
    expect(spend.worstCase()).toBe(1);
    expect(await spend.admit(never)).toBe('refused');
  });

  test("should count an earlier run's spend and unpriced calls against the cap", async () => {
    // $0.25 spent and one unpriced call at $0.50: a call fits under $1.30, and after it ($0.10) no second one.
    const spend = new CrewSpend(1.3, 0.5, { spentUsd: 0.25, unpriced: 1 });
    hold(await spend.admit(new AbortController().signal)).settle(0.1);
    expect(spend.facts()).toMatchObject({ spentUsd: 0.35, unpriced: 1 });
    expect(await spend.admit(new AbortController().signal)).toBe('refused');
  });

  test('should hold an adopted call (it runs already) at once, cap or no room, and settle it like any other', async () => {
    const spend = new CrewSpend(0.5, 0.5, { spentUsd: 0.5, unpriced: 0 });
    const stop = new AbortController();
    stop.abort('SIGTERM');
    const adopted = hold(await spend.admit(stop.signal, { running: true }));
    expect(spend.facts().heldUsd).toBe(0.5);
    adopted.settle(0.01);
    expect(spend.facts()).toMatchObject({ spentUsd: 0.51, heldUsd: 0 });
  });

  test('should let a call waiting for room go when the crew is cancelled, holding nothing', async () => {
    const spend = new CrewSpend(0.5, 0.5);
    const stop = new AbortController();
    const first = hold(await spend.admit(stop.signal));
    const waiting = spend.admit(stop.signal);
    stop.abort('SIGTERM');
    expect(await waiting).toBe('cancelled');
    first.settle(0);
    expect(spend.facts().heldUsd).toBe(0);
  });

  test('should hold nothing and refuse nothing without a cap, and still add what calls cost', async () => {
    const spend = new CrewSpend(null, 0.5);
    const h = hold(await spend.admit(new AbortController().signal));
    expect(spend.facts().heldUsd).toBe(0);
    h.settle(7);
    h.settle(7);
    expect(spend.facts()).toMatchObject({ spentUsd: 7, heldUsd: 0 });
  });
});

describe("a lane's cost", () => {
  test("should be its reviewers' ledger plus its observers' and agent's spend, with reviewers' unknown calls among its unpriced", () => {
    expect(laneCost({ agentUsd: 0.015, observerUsd: 0.0075, unpriced: 1 }, { spent: 0.0105, unknown_n: 2 })).toEqual({
      reviewUsd: 0.0105,
      observerUsd: 0.0075,
      agentUsd: 0.015,
      usd: 0.033,
      unpriced: 3,
    });
    expect(laneCost({}, null)).toEqual({ reviewUsd: 0, observerUsd: 0, agentUsd: 0, usd: 0, unpriced: 0 });
  });

  test("should add each QA step's observer calls to the lane, and leave a lane no observer call charged as it was", () => {
    expect(observerCharge({ observerUsd: 0.01 }, { usd: 0.00375, unpriced: 0 }, { usd: 0.00375, unpriced: 1 })).toEqual({ observerUsd: 0.0175, unpriced: 1 });
    expect(observerCharge({}, {}, { usd: 0 })).toEqual({});
  });
});
