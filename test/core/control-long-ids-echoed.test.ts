// Admin API errors that echo an id or slug the caller sent cut it to its first 200 characters and
// say its length (echoedName). What reaches a handler: a path segment of at most 100 characters
// (Fastify's maxParamLength answers a longer one with a 400; past Node's 16 KB header limit the
// URL is a 431 before any route), and body references of any length in a catalog file, which
// were echoed whole. Short ids are echoed exactly as before.
import t from 'tap';
import { startRelay } from '../../core/testing.ts';

const relay = await startRelay();
t.teardown(() => relay.close());
const { api } = relay;

const HEAD = 'r'.repeat(200);
const LONG = `${HEAD}${'x'.repeat(100 * 1024 - 200)}`;
const messageOf = (body: unknown): string => (body as { error: { message: string } }).error.message;

t.test('a path segment past 100 characters never reaches a handler; its error is bounded', async (t) => {
  const paths = (id: string) => [
    ['GET', `/api/providers/${id}`], ['PUT', `/api/providers/by-id/${id}`], ['DELETE', `/api/providers/by-id/${id}`],
    ['GET', `/api/usage/budgets/${id}`], ['GET', `/api/logs/${id}`], ['GET', `/api/models/${id}/context-window`],
  ] as const;
  for (const [method, path] of paths(LONG)) {
    const res = await api(method, path, method === 'PUT' ? { metadata: { displayName: 'x' } } : undefined);
    t.equal(res.status, 431, `${method} with a 100 KB id: over Node's header limit`);
    t.ok(messageOf(res.body).length < 1024, 'a bounded message');
  }
  for (const [method, path] of paths('s'.repeat(10_000))) {
    const res = await api(method, path, method === 'PUT' ? { metadata: { displayName: 'x' } } : undefined);
    t.equal(res.status, 400, `${method} with a 10 KB id: over maxParamLength`);
    t.match(messageOf(res.body), /longer than any id or slug/);
    t.ok(messageOf(res.body).length < 1024, 'a bounded message');
  }
});

t.test('the longest id that reaches a handler is echoed whole', async (t) => {
  const id = 'a'.repeat(100);
  t.equal(messageOf((await api('GET', `/api/providers/${id}`)).body), `no provider with slug or id "${id}"`);
  t.equal(messageOf((await api('GET', `/api/usage/budgets/${id}`)).body), `no budget with id or slug "${id}"`);
  t.equal(messageOf((await api('GET', `/api/logs/${id}`)).body), `no logged request with id "${id}"`);
  t.equal(messageOf((await api('GET', `/api/models/${id}/context-window`)).body), `no model with slug or id "${id}"`);
  const missing = '00000000-0000-4000-8000-000000000000';
  t.equal(messageOf((await api('DELETE', `/api/providers/by-id/${missing}`)).body), `no provider with id ${missing}`);
});

t.test('a 100 KB id as a body reference through the API is refused by its schema, bounded', async (t) => {
  const provider = await api('POST', '/api/providers', { metadata: { displayName: 'OpenAI' }, spec: { adapter: 'openai' } });
  t.equal(provider.status, 201);
  const host = await api('POST', '/api/hosts', { metadata: { displayName: 'h' }, spec: { providerId: provider.body.metadata.id, baseUrl: 'https://x.test/v1' } });
  t.equal(host.status, 201);
  for (const [method, path] of [['POST', '/api/hosts'], ['PUT', `/api/hosts/by-id/${host.body.metadata.id}`]] as const) {
    const res = await api(method, path, { metadata: { displayName: 'h2' }, spec: { providerId: LONG, baseUrl: 'https://x.test/v1' } });
    t.equal(res.status, 400, `${method}: 400`);
    t.equal(res.body.error.field, '/spec/providerId');
    t.ok(messageOf(res.body).length < 1024, `${method}: a bounded message`);
  }
});

t.test('a catalog file: a 100 KB slug reference is echoed as its first 200 characters and its length', async (t) => {
  const apply = (providerId: string) => api('POST', '/api/catalog/apply', {
    document: { version: 1, hosts: [{ slug: 'h', spec: { providerId, baseUrl: 'https://x.test/v1' } }] },
  });
  const res = await apply(LONG);
  t.equal(res.status, 400);
  t.equal(res.body.error.field, 'hosts/h/spec/providerId');
  const message = messageOf(res.body);
  t.ok(message.length < 1024, `the message is bounded (${message.length} characters)`);
  t.ok(message.includes(HEAD), 'its first 200 characters');
  t.notOk(message.includes(`${HEAD}x`), 'nothing after them');
  t.match(message, /102400 characters/, 'its full length');

  const short = await apply('no-such-provider');
  t.equal(messageOf(short.body), 'hosts/h: /spec/providerId: no provider with slug "no-such-provider" in the file nor in the catalog', 'a short slug is echoed exactly');
});
