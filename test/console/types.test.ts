import { describe, expectTypeOf, it } from 'vitest';
import type { AgentEventType } from '../../src/agent/events.js';
import type { TimelineEvent as Served } from '../../src/console/sessions.js';
import type { StepRequestView as ServedRequest } from '../../src/console/step-requests.js';
import type { TimelineEvent as Shown, StepRequestView as ShownRequest } from '../../web/src/types.js';

/**
 * The front end keeps its own copy of the API's types (web/ is built apart, for the browser). These checks run in
 * `tsc` (npm run check): an event type the harness adds or drops, or a field the page reads changing its type,
 * fails them until the page's types say the same, so a session's page never silently drops a kind of event.
 */
describe('the console front end and the harness events', () => {
  it('every served timeline event is one the page declares', () => {
    expectTypeOf<Served>().toExtend<Shown>();
  });

  it('the page declares every event type the harness writes, and no other', () => {
    type Written = Exclude<AgentEventType, 'text-delta'>;
    expectTypeOf<Shown['type']>().toEqualTypeOf<Written>();
  });

  it("a step's request detail is the same on both sides", () => {
    expectTypeOf<ServedRequest>().toEqualTypeOf<ShownRequest>();
  });
});
