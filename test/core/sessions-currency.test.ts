// GET /api/usage/sessions lists the costliest first; costs in different currencies do not compare
// (¥300 is not more than $5), so sessions priced in more than one currency are ordered by tokens,
// in one backend's list and in the merge of several (a switch of usage backend).
import t from 'tap';
import { mergeSessions, sessionsOfEvents } from '../../core/observer/sessions.ts';
import { usageEvent } from '../support/observer-fixtures.ts';

const at = new Date(Date.now() - 60_000).toISOString();
const turn = (session: string, cost: number, currency: string | null, tokens: number) =>
  usageEvent({ extras: { 'thread-id': session }, cost, currency, input_tokens: tokens, output_tokens: 0, started_at: at });

t.test('in one currency, the costliest first (not the most tokens)', async (t) => {
  const sessions = sessionsOfEvents([turn('cheap-long', 1, 'USD', 9000), turn('dear-short', 5, 'USD', 100), turn('unpriced', 0, null, 50_000)], { limit: 10 });
  t.same(sessions.map((s) => s.session_id), ['dear-short', 'cheap-long', 'unpriced'], 'an unpriced session is in no currency: the costs still compare');
  t.same(sessions.map((s) => s.currencies), [['USD'], ['USD'], []]);
});

t.test('in two currencies, the most tokens first: the yen session\'s larger number is not a larger cost', async (t) => {
  const sessions = sessionsOfEvents([turn('yen', 300, 'JPY', 2000), turn('dollars', 5, 'USD', 8000), turn('both', 1, 'USD', 1000), turn('both', 100, 'JPY', 500)], { limit: 10 });
  t.same(sessions.map((s) => s.session_id), ['dollars', 'yen', 'both']);
  t.same(sessions.map((s) => s.currencies), [['USD'], ['JPY'], ['JPY', 'USD']], 'each session says what its cost is in');
  t.same(sessionsOfEvents([turn('yen', 300, 'JPY', 2000), turn('dollars', 5, 'USD', 8000)], { limit: 1 }).map((s) => s.session_id), ['dollars'], 'cut after ordering');
  t.same(sessionsOfEvents([turn('yen', 300, 'JPY', 2000), turn('dollars', 5, 'USD', 8000)], { limit: 10, sort: 'recent' }).length, 2);
});

t.test('merged from two backends, each in its own currency: the most tokens first, currencies joined', async (t) => {
  const before = sessionsOfEvents([turn('yen', 300, 'JPY', 2000), turn('shared', 50, 'JPY', 100)], { limit: 10 });
  const after = sessionsOfEvents([turn('dollars', 5, 'USD', 8000), turn('shared', 1, 'USD', 100)], { limit: 10 });
  const merged = mergeSessions([before, after], { limit: 10 });
  t.same(merged.map((s) => s.session_id), ['dollars', 'yen', 'shared']);
  t.same(merged.find((s) => s.session_id === 'shared')?.currencies, ['JPY', 'USD']);
  t.same(merged.find((s) => s.session_id === 'shared')?.costs, [{ currency: 'JPY', cost: 50 }, { currency: 'USD', cost: 1 }], 'one currency in each backend, two once merged: each amount');
  t.equal(merged.find((s) => s.session_id === 'yen')?.costs, undefined, 'in one currency: no split');
  t.same(mergeSessions([after, sessionsOfEvents([turn('more', 9, 'USD', 10)], { limit: 10 })], { limit: 10 }).map((s) => s.session_id),
    ['more', 'dollars', 'shared'], 'merged in one currency: the costliest first');
});

t.test('a session priced in two currencies gets each amount; merged, the amounts add per currency', async (t) => {
  const [both] = sessionsOfEvents([turn('both', 0.25, 'USD', 10), turn('both', 100, 'JPY', 10), turn('both', 0.5, 'USD', 10), turn('both', 0, null, 10)], { limit: 10 });
  t.same(both?.costs, [{ currency: 'JPY', cost: 100 }, { currency: 'USD', cost: 0.75 }], 'the costliest first; the unpriced turn in none');
  const later = sessionsOfEvents([turn('both', 0.1, 'EUR', 10), turn('both', 0.05, 'USD', 10)], { limit: 10 });
  const [merged] = mergeSessions([[both!], later], { limit: 10 });
  t.same(merged?.currencies, ['EUR', 'JPY', 'USD']);
  t.same(merged?.costs, [{ currency: 'JPY', cost: 100 }, { currency: 'USD', cost: 0.8 }, { currency: 'EUR', cost: 0.1 }]);
  // An in-house backend that gives no split: the merged session's amounts are not known, so none are given.
  const { costs: _dropped, ...withoutSplit } = later[0]!;
  t.equal(mergeSessions([[both!], [withoutSplit]], { limit: 10 })[0]?.costs, undefined, 'a backend without the split: no amounts rather than wrong ones');
});

t.test('amounts merged across backends add in micro-units: no float noise', async (t) => {
  const one = sessionsOfEvents([turn('s', 0.1, 'USD', 10), turn('s', 1, 'EUR', 10)], { limit: 10 });
  const two = sessionsOfEvents([turn('s', 0.2, 'USD', 10)], { limit: 10 });
  t.same(mergeSessions([one, two], { limit: 10 })[0]?.costs, [{ currency: 'EUR', cost: 1 }, { currency: 'USD', cost: 0.3 }], '0.1 + 0.2 is 0.3');
});
