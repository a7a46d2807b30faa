// The control plane's audit trail (GET /api/audit): every change an authenticated caller asked for,
// refused ones included, and every sign-in, newest first, with who, the route, the entity and the
// status; never a body's secret; nothing from a caller without credentials; admins only.
import t from 'tap';
import { eventually, startRelay } from '../../core/testing.ts';

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
  t.same(rows, [
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
  ], 'newest first, a catalog entity by its slug as it was (a deleted one too); the unauthenticated call and the failed sign-in are not recorded');
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
