import { EventLog, type EventFormat } from '../chat/event-log';
import type { AppDeps } from '../deps';
import type { ApiResponseRow } from '../db/schema';
import { apiEventsAfter, appendApiEvents, findApiResponse, isApiTerminal } from './api-response.store';
import { namedFrame } from './text-stream';

/**
 * The event log of the door's background responses (src/chat/event-log.ts with this format):
 * OpenAI's streaming events, stored as sent in `api_response_events` and framed as OpenAI frames
 * them (`event: <type>`, `data: <json>`), so `GET /v1/responses/{id}?stream=true&starting_after=N`
 * replays them from the database and follows the live tail like Parley's own streams.
 */

const TERMINAL = /^\{"type":"(response\.completed|response\.failed|response\.incomplete|error)"/;

/** The `type` of an event's data, which every event serialises first. */
const typeOf = (data: string) => data.slice(9, data.indexOf('"', 9));

/** The last event of a response, built from its row (its own last event was not stored). */
export function endingOf(row: Pick<ApiResponseRow, 'status' | 'body' | 'lastSeq'>): Record<string, unknown> {
  const sequence_number = row.lastSeq - 1;
  switch (row.status) {
    case 'completed':
    case 'incomplete':
    case 'failed':
      return { type: `response.${row.status}`, response: row.body, sequence_number };
    default:
      return { type: 'error', code: 'response_cancelled', message: 'The response was cancelled.', param: null, sequence_number };
  }
}

export const apiEvents: EventFormat = {
  topic: (id) => `api-response:${id}`,
  frame: (_id, _seq, data) => namedFrame(typeOf(data), data),
  terminal: (data) => TERMINAL.test(data),
  append: appendApiEvents,
  eventsAfter: apiEventsAfter,
  *state(tx, id) {
    const row = yield* findApiResponse(tx, id);
    return row && { ended: isApiTerminal(row.status), lastSeq: row.lastSeq, ending: JSON.stringify(endingOf(row)) };
  },
};

/** The event log of the door's background responses (stateless: any number of them write and follow the same responses). */
export const apiEventLog = (deps: Pick<AppDeps, 'store' | 'now' | 'bus'>) => new EventLog(deps.store, deps.now, deps.bus, apiEvents);
