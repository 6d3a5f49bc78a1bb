import { describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { groupWith, send } from './group-helpers';
import { groupEventRelay, groupTopic, type GroupEvent } from '../src/groups/group-events';

/**
 * The receiving side of group events on a cluster bus (src/groups/group-events.ts,
 * `groupEventRelay`): a second app on the same database stands for another instance.
 */
describe('group events from other instances', () => {
  const decode = (e: GroupEvent) => ({ seq: e.seq, type: e.type, frame: new TextDecoder().decode(e.frame) });

  test('are delivered in sequence: one that overtakes an earlier one waits while the missing are read from the database; duplicates go', async () => {
    const here = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = here.users[0]!;
    const group = await groupWith(here, ann);
    for (const m of ['one', 'two', 'three', 'four']) await send(here, ann, group.id, m);
    const there = createTestContext({ db: here.db });
    const relay = groupEventRelay(there.deps);
    const sent: GroupEvent[] = [];
    // What the sending instance put on the wire: its events as published.
    here.deps.bus.subscribe<GroupEvent>(groupTopic(group.id), (e) => sent.push(e));
    for (const m of ['five', 'six', 'seven']) await send(here, ann, group.id, m);
    const wire = sent.map((e) => relay.encode(e));
    expect(JSON.parse(JSON.stringify(wire)).map((w: { s: number }) => w.s)).toEqual([5, 6, 7]);
    const got: GroupEvent[] = [];
    const deliver = (e: unknown) => got.push(e as GroupEvent);
    // The first event this instance sees of the group is taken as it is.
    relay.receive(groupTopic(group.id), wire[0], deliver);
    expect(got.map((e) => e.seq)).toEqual([5]);
    // Seven overtakes six: it waits for the read of six.
    relay.receive(groupTopic(group.id), wire[2], deliver);
    expect(got.map((e) => e.seq)).toEqual([5]);
    for (let i = 0; i < 50 && got.length < 3; i++) await Bun.sleep(10);
    expect(got.map((e) => e.seq)).toEqual([5, 6, 7]);
    // Six arriving late, and seven again: already delivered.
    relay.receive(groupTopic(group.id), wire[1], deliver);
    relay.receive(groupTopic(group.id), wire[2], deliver);
    await Bun.sleep(20);
    expect(got.map((e) => e.seq)).toEqual([5, 6, 7]);
    // The frames made again there are the sender's, byte for byte.
    expect(got.map(decode)).toEqual(sent.map(decode));
  });

  test('after a bus gap, the groups followed here read what they missed, for their listeners only', async () => {
    const here = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = here.users[0]!;
    const group = await groupWith(here, ann);
    const there = createTestContext({ db: here.db });
    const relay = groupEventRelay(there.deps);
    const seen: (number | null)[] = [];
    there.deps.bus.subscribe<GroupEvent>(groupTopic(group.id), (e) => seen.push(e.seq));
    const sent: GroupEvent[] = [];
    here.deps.bus.subscribe<GroupEvent>(groupTopic(group.id), (e) => sent.push(e));
    await send(here, ann, group.id, 'one');
    relay.receive(groupTopic(group.id), relay.encode(sent[0]!), (e) => there.deps.bus.publish(groupTopic(group.id), e));
    // Two and three are lost on the way.
    await send(here, ann, group.id, 'two');
    await send(here, ann, group.id, 'three');
    const published: string[] = [];
    relay.catchUp((topic, e) => {
      published.push(topic);
      there.deps.bus.publish(topic, e);
    });
    for (let i = 0; i < 50 && seen.length < 3; i++) await Bun.sleep(10);
    expect(seen).toEqual([sent[0]!.seq, sent[1]!.seq, sent[2]!.seq]);
    expect(published).toEqual([groupTopic(group.id), groupTopic(group.id)]);
  });
});
