// The control plane's audit trail (GET /api/audit): every change an authenticated caller asked for,
// refused ones included, and every sign-in, newest first, with who, the route, the entity and the
// status; never a body's secret; nothing from a caller without credentials; admins only. Rows
// past admin.auditRetentionDays are deleted.
import t from 'tap';
import pino from 'pino';
import { eventually, startRelay } from '../../core/testing.ts';
import { AuditRetention } from '../../core/control/audit-retention.ts';

interface Entry {
  id: string; at: string; actor: { kind: string; name: string | null }; method: string; route: string;
  target: string | null; targetName: string | null; status: number; requestId: string; clientIp: string;
}

t.test('the audit trail', async (t) => {
  const relay = await startRelay({});
  t.teardown(() => relay.close());
  const control = (method: string, path: string, headers: Record<string, string>, body?: unknown) => fetch(relay.controlUrl + path, {
    method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const signIn = async (username: string, password: string) => {
    const res = await control('POST', '/api/auth/login', {}, { username, password });
    t.equal(res.status, 200, `${username} signs in`);
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-relay-csrf': '1' };
  };
  const audit = async (query = ''): Promise<{ items: Entry[]; nextCursor: string | null }> => {
    const res = await relay.api('GET', `/api/audit${query}`);
    t.equal(res.status, 200, `GET /api/audit${query}`);
    return res.body;
  };

  const adminPassword = 'audit admin password 1';
  const viewerPassword = 'audit viewer password 1';
  t.equal((await relay.api('POST', '/api/users', { username: 'ada', password: adminPassword, role: 'admin' })).status, 201);
  t.equal((await relay.api('POST', '/api/users', { username: 'vic', password: viewerPassword, role: 'viewer' })).status, 201);
  const ada = await signIn('ada', adminPassword);
  const vic = await signIn('vic', viewerPassword);

  const hostKeySecret = 'sk-audit-host-key-never-in-the-trail';
  const createAs = async (who: Record<string, string>, kind: string, body: unknown): Promise<string> => {
    const res = await control('POST', `/api/${kind}`, who, body);
    t.equal(res.status, 201, `${kind} created`);
    return ((await res.json()) as { metadata: { id: string } }).metadata.id;
  };
  const providerId = await createAs(ada, 'providers', { metadata: { displayName: 'Audited' }, spec: { adapter: 'openai' } });
  const hostId = await createAs(ada, 'hosts', { metadata: { displayName: 'audited host' }, spec: { providerId, baseUrl: 'http://127.0.0.1:9/v1' } });
  const hostKeyId = await createAs(ada, 'host-keys', { metadata: { displayName: 'audited key' }, spec: { hostId, valueFrom: { kind: 'stored' }, value: hostKeySecret } });
  const policyId = await createAs(ada, 'policies', { metadata: { displayName: 'audited policy' }, spec: { tier: 'relay', modelIds: [] } });
  const created = await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'audited relay key' }, spec: { policyId } });
  t.equal(created.status, 201);
  const relayKeyId = created.body.relayKey.metadata.id as string;
  const rotated = await relay.api('POST', `/api/relay-keys/by-id/${relayKeyId}/rotate`);
  t.equal(rotated.status, 200);
  t.equal((await control('DELETE', `/api/host-keys/by-id/${hostKeyId}`, vic)).status, 403, 'the viewer is refused');
  t.equal((await control('DELETE', `/api/host-keys/by-id/${hostKeyId}`, {})).status, 401, 'no credentials');
  t.equal((await control('POST', '/api/auth/login', {}, { username: 'ada', password: 'not her password' })).status, 401, 'a failed sign-in');
  t.equal((await control('DELETE', `/api/host-keys/by-id/${hostKeyId}`, ada)).status, 204);

  // A row is written just after its answer went out: wait for the last change's.
  await eventually(async () => (await relay.api('GET', '/api/audit')).body.items.length === 12);
  const { items } = await audit();
  const rows = items.map((e) => `${e.actor.kind}:${e.actor.name ?? '-'} ${e.method} ${e.route} ${e.target ?? '-'} ${e.targetName ?? '-'} ${e.status}`);
  // Each row is written after its answer, so two close together may land in either order: compared as sets, and read newest (highest id) first.
  t.ok(items.every((e, i) => i === 0 || BigInt(items[i - 1]!.id) > BigInt(e.id)), 'newest first');
  t.same([...rows].sort(), [
    `user:ada DELETE /api/host-keys/by-id/:id ${hostKeyId} audited-key 204`,
    `user:vic DELETE /api/host-keys/by-id/:id ${hostKeyId} - 403`,
    `admin-token:- POST /api/relay-keys/by-id/:id/rotate ${relayKeyId} audited-relay-key 200`,
    `admin-token:- POST /api/relay-keys ${relayKeyId} audited-relay-key 201`,
    `user:ada POST /api/policies ${policyId} audited-policy 201`,
    `user:ada POST /api/host-keys ${hostKeyId} audited-key 201`,
    `user:ada POST /api/hosts ${hostId} audited-host 201`,
    `user:ada POST /api/providers ${providerId} audited 201`,
    'user:vic POST /api/auth/login - - 200',
    'user:ada POST /api/auth/login - - 200',
    'admin-token:- POST /api/users vic - 201',
    'admin-token:- POST /api/users ada - 201',
  ].sort(), 'a catalog entity by its slug as it was (a deleted one too); the unauthenticated call and the failed sign-in are not recorded');
  t.ok(items.every((e) => e.requestId !== '' && e.clientIp !== '' && !Number.isNaN(Date.parse(e.at))), 'each has a request id, an address and a time');

  const text = JSON.stringify(items);
  for (const secret of [hostKeySecret, created.body.plaintext, rotated.body.plaintext, adminPassword, viewerPassword, relay.adminToken, ada.cookie.split('=')[1]!]) {
    t.notOk(text.includes(secret), 'no secret in the trail');
  }

  t.test('filters and pages', async (t) => {
    const byVic = await audit('?actor=vic');
    t.same(byVic.items.map((e) => e.status), [403, 200], "only vic's");
    const byKey = await audit(`?target=${hostKeyId}`);
    t.equal(byKey.items.length, 3, 'everything that named the host key');
    const first = await audit('?limit=5');
    t.equal(first.items.length, 5);
    t.equal(first.nextCursor, first.items[4]!.id);
    const second = await audit(`?limit=5&before=${first.nextCursor}`);
    const third = await audit(`?limit=5&before=${second.nextCursor}`);
    t.same([...first.items, ...second.items, ...third.items].map((e) => e.id), items.map((e) => e.id), 'the pages join up');
    t.equal(third.nextCursor, null, 'the last page says so');
  });

  t.test('bad queries are a 400 naming the field', async (t) => {
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=abc', 'limit'], ['?before=1%20OR%201%3D1', 'before'], ['?before=-1', 'before'], ['?colour=red', 'colour']]) {
      const res = await relay.api('GET', `/api/audit${query}`);
      t.equal(res.status, 400, query);
      t.match(JSON.stringify(res.body), field, `${query} names ${field}`);
    }
  });

  t.test('only admins read it', async (t) => {
    t.equal((await control('GET', '/api/audit', vic)).status, 403, 'a viewer');
    t.equal((await control('GET', '/api/audit', {})).status, 401, 'nobody');
    t.equal((await control('GET', '/api/audit', ada)).status, 200, 'an admin user');
  });
});

t.test('admin.auditRetentionDays: older rows are deleted, at start and by each sweep', async (t) => {
  const relay = await startRelay({});
  t.teardown(() => relay.close());
  const db = relay.relay.db;
  const change = async (name: string) => {
    const res = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: name }, spec: { requestsPerMinute: 5 } });
    t.equal(res.status, 201);
    const id = res.body.metadata.id as string;
    await eventually(async () => (await db.query('SELECT 1 FROM control_audit WHERE target = $1', [id])).rows.length === 1);
    return id;
  };
  const aged = await change('aged');
  await db.query(`UPDATE control_audit SET at = now() - interval '31 days' WHERE target = $1`, [aged]);
  const fresh = await change('fresh');
  const kept = async (id: string) => (await db.query('SELECT 1 FROM control_audit WHERE target = $1', [id])).rows.length === 1;

  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(line); } });
  const retention = new AuditRetention(db, log, 30);
  t.teardown(() => retention.close());
  await eventually(async () => !(await kept(aged)), 5_000); // the sweep at start
  t.ok(await kept(fresh), 'a row within the retention stays');
  t.equal(await retention.sweep(), 0, 'a sweep after it finds nothing more');
  await db.query(`UPDATE control_audit SET at = now() - interval '31 days' WHERE target = $1`, [fresh]);
  t.equal(await retention.sweep(), 1, 'the sweep deletes what aged since');
  t.equal(warnings.length, 0);

  await db.query('ALTER TABLE control_audit RENAME TO control_audit_away');
  t.equal(await retention.sweep(), 0, 'a failed delete deletes nothing');
  await db.query('ALTER TABLE control_audit_away RENAME TO control_audit');
  t.match(warnings.join(''), /could not delete the audit trail's rows past admin.auditRetentionDays/, 'and is logged');

  await t.test('set in the config, a starting instance sweeps', { skip: relay.databaseUrl === null ? 'the embedded database has one instance' : false }, async (t) => {
    const old = await change('old');
    await db.query(`UPDATE control_audit SET at = now() - interval '8 days' WHERE target = $1`, [old]);
    const second = await startRelay({ database: relay.databaseUrl!, masterKey: relay.masterKey, config: { admin: { auditRetentionDays: 7 } } });
    t.teardown(() => second.close());
    await eventually(async () => !(await kept(old)), 5_000);
    t.pass('the row past 7 days is gone');
  });

  t.test('a retention under a day is refused at start', async (t) => {
    await t.rejects(startRelay({ config: { admin: { auditRetentionDays: 0 } } }), /auditRetentionDays/);
  });
});
