// Query parameters of the control plane's list and usage reads that used to slip past
// validation: a hand-made catalog cursor (500 from Postgres), a fractional limit (truncated),
// and time filters that overflow Date or name a day that does not exist (500, or silently
// ignored). Each is a 400 RELAY_ERR_BAD_REQUEST naming the parameter. One whole Relay
// (Postgres by default, RELAY_TEST_DB=pglite for PGlite).
import t, { type Test } from 'tap';
import { startRelay } from '../../core/testing.ts';

const relay = await startRelay();
t.teardown(() => relay.close());
const { api } = relay;

for (const name of ['One', 'Two', 'Three']) {
  const res = await api('POST', '/api/rate-limits', { metadata: { displayName: name }, spec: { requestsPerMinute: 10 } });
  if (res.status !== 201) throw new Error(`seed: ${res.status} ${JSON.stringify(res.body)}`);
}

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const someId = '2acad905-f8bf-4fb4-9503-bd7edcf2d8ca';

function expect400(t: Test, res: { status: number; body: any }, field: string, message?: RegExp) {
  t.equal(res.status, 400, `400 naming ${field}`);
  t.equal(res.body?.error?.code, 'RELAY_ERR_BAD_REQUEST');
  t.equal(res.body?.error?.field, field);
  if (message) t.match(res.body?.error?.message, message);
}

t.test('catalog cursor: both elements are checked before Postgres sees them', async (t) => {
  const reference = await api('GET', '/api/rate-limits?cursor=nonsense');
  expect400(t, reference, 'cursor');
  for (const createdAt of ['x', '2026-02-30 12:00:00+00', '0000-01-01 00:00:00+00', '2026-01-31 25:00:00+00', 'infinity', 'now', '2026-01-31']) {
    const res = await api('GET', `/api/rate-limits?cursor=${cursorOf([createdAt, someId])}`);
    expect400(t, res, 'cursor');
    t.equal(res.body.error.message, reference.body.error.message, `${JSON.stringify(createdAt)}: the same answer as any bad cursor`);
  }
  expect400(t, await api('GET', `/api/rate-limits?cursor=${cursorOf(['2026-01-31 12:00:00+00', 'not-a-uuid'])}`), 'cursor');
  expect400(t, await api('GET', `/api/rate-limits?cursor=${cursorOf([12, someId])}`), 'cursor');
});

t.test('catalog cursor: what Postgres prints (and ISO 8601 forms) still pages', async (t) => {
  const all = await api('GET', '/api/rate-limits');
  t.equal(all.body.items.length, 3);
  const page = await api('GET', '/api/rate-limits?limit=1');
  const next = await api('GET', `/api/rate-limits?limit=1&cursor=${page.body.nextCursor}`);
  t.equal(next.status, 200, 'a cursor this API returned');
  t.equal(next.body.items[0].metadata.id, all.body.items[1].metadata.id);
  for (const createdAt of ['1999-12-31 23:59:59.123456+00', '1999-12-31T23:59:59Z', '1999-12-31 23:59:59+05:30', '2000-02-29 00:00:00-08']) {
    const res = await api('GET', `/api/rate-limits?cursor=${cursorOf([createdAt, someId])}`);
    t.equal(res.status, 200, `${createdAt} accepted`);
    t.equal(res.body.items.length, 3, 'everything is after it');
  }
});

t.test('catalog limit: an integer, not truncated', async (t) => {
  for (const limit of ['1.5', '2.0001', '1e-3', 'two', '']) {
    expect400(t, await api('GET', `/api/rate-limits?limit=${limit}`), 'query:/limit', /integer/);
  }
  const two = await api('GET', '/api/rate-limits?limit=2');
  t.equal(two.status, 200);
  t.equal(two.body.items.length, 2);
  t.equal((await api('GET', '/api/rate-limits?limit=2.0')).body.items.length, 2, '2.0 is the integer 2');
  // The logs endpoint answers the same way.
  expect400(t, await api('GET', '/api/logs?limit=1.5'), 'limit');
});

t.test('usage and log time filters', async (t) => {
  expect400(t, await api('GET', '/api/usage/summary?since=20000000w'), 'since', /before year 0/);
  expect400(t, await api('GET', '/api/usage/timeseries?since=999999999w&bucket=999999999w'), 'since');
  expect400(t, await api('GET', '/api/usage/timeseries?since=1d&bucket=999999999w'), 'bucket', /at most/);
  expect400(t, await api('GET', '/api/logs?since=999999999w'), 'since');
  expect400(t, await api('GET', '/api/usage/events?since=999999999w'), 'since');
  expect400(t, await api('GET', '/api/logs?from=2026-02-30'), 'from', /does not exist/);
  expect400(t, await api('GET', '/api/usage/summary?to=2026-04-31T10:00:00Z'), 'to', /does not exist/);
  expect400(t, await api('GET', '/api/logs?from=2026-01-01T24:00:00Z'), 'from');
  // Sensible windows still answer.
  t.equal((await api('GET', '/api/usage/summary?since=520w')).status, 200);
  t.equal((await api('GET', '/api/usage/timeseries?since=7d&bucket=1d')).status, 200);
  t.equal((await api('GET', '/api/logs?from=2024-02-29&to=2024-03-01T00:00:00Z')).status, 200);
  const widest = await api('GET', '/api/usage/timeseries?from=0000-01-01&bucket=3650d');
  t.equal(widest.status, 200, 'the widest window at the largest bucket');
  t.equal(widest.body.from, '0000-01-01T00:00:00.000Z');
});
