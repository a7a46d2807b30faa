// A session id is the client's choice (a thread-id header): a session is one relay key's, so a key
// that sends another key's id makes a session of its own, in one backend's list, in the merge of
// several (a switch of usage backend), and a session page without relayKeyId adds them up naming no key.
import t from 'tap';
import { acrossKeys, mergeSessions, sessionsOfEvents } from '../../core/observer/sessions.ts';
import { usageEvent } from '../support/observer-fixtures.ts';

const at = new Date(Date.now() - 60_000).toISOString();
const turn = (relayKeyId: string | null, cost: number) =>
  usageEvent({ relay_key_id: relayKeyId, relay_key_prefix: relayKeyId && `rk_${relayKeyId}`, extras: { 'thread-id': 'victim-thread-777' }, cost, started_at: at });
const keysOf = (sessions: Array<{ relay_key_id: string | null; turns: number; totals: { cost: number } }>) => sessions.map((s) => [s.relay_key_id, s.turns, s.totals.cost]);

t.test("two keys with one session id: two sessions, each with its own turns and cost", async (t) => {
  const sessions = sessionsOfEvents([turn('team-b', 5), turn('team-a', 1), turn('team-a', 2)], { limit: 10 });
  t.same(keysOf(sessions), [['team-b', 1, 5], ['team-a', 2, 3]]);
  t.same(sessions.map((s) => s.relay_key_prefix), ['rk_team-b', 'rk_team-a']);
});

t.test('merged from two backends: one key\'s session adds up, the other key\'s stays apart', async (t) => {
  const before = sessionsOfEvents([turn('team-a', 1), turn('team-b', 5)], { limit: 10 });
  const after = sessionsOfEvents([turn('team-a', 2)], { limit: 10 });
  t.same(keysOf(mergeSessions([before, after], { limit: 10 })), [['team-b', 1, 5], ['team-a', 2, 3]]);
});

t.test('equal cost and time: by relay key id, no key last', async (t) => {
  t.same(keysOf(sessionsOfEvents([turn(null, 1), turn('team-b', 1), turn('team-a', 1)], { limit: 10 })), [['team-a', 1, 1], ['team-b', 1, 1], [null, 1, 1]]);
});

t.test("across keys (a session page without relayKeyId): every turn with the id, naming no key", async (t) => {
  const sessions = sessionsOfEvents([turn('team-a', 1), turn('team-b', 5)], { limit: 10 });
  t.match(acrossKeys(sessions), { session_id: 'victim-thread-777', relay_key_id: null, relay_key_prefix: null, turns: 2, totals: { cost: 6 } });
  t.equal(acrossKeys(sessions.slice(0, 1)), sessions[0], "one key's: that session as it is");
  t.equal(acrossKeys([]), undefined);
});

t.test('a backend written before sessions had keys (no relay_key_id) reads as keyless, not as a response that cannot be written', async (t) => {
  const { relay_key_id: _id, relay_key_prefix: _prefix, ...old } = sessionsOfEvents([turn('team-a', 1)], { limit: 10 })[0]!;
  for (const lists of [[[old]], [[old], []]]) {
    const merged = mergeSessions(lists as never, { limit: 10 });
    t.match(merged, [{ session_id: 'victim-thread-777', turns: 1 }]);
    t.equal(merged[0]!.relay_key_id, null, 'named as no key (null), as the response schema requires');
    t.equal(merged[0]!.relay_key_prefix, null);
  }
});
