// Property-based fuzzing of the control API, driven by its own OpenAPI document: for every
// operation, path parameters, query parameters and bodies generated from its schemas (valid, and
// deliberately violating them: wrong types, huge strings, unknown fields, cut JSON, invalid UTF-8),
// sent with the admin token. No answer may be a 5xx (the database is up, so not even a 503);
// every 4xx is a JSON error. Then every free-form field (a host's options) nested 5,000 levels
// deep in an otherwise valid body, wrong content types, an oversized body, huge headers, a bad
// percent-encoding. Fixed seed, bounded cases, a timeout on every request.
import fc from 'fast-check';
import t from 'tap';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay } from '../support/relay-client.ts';
import { recordCounters } from './counters.ts';
import { deepFreeFormFor, hostileFor, toJsonText, validFor, type Schema, type SchemaContext } from './schema-arbitrary.ts';

const SEED = 1103;
const CASES_PER_OPERATION = 16;
const DEEP_CASES_PER_OPERATION = 4;
const REQUEST_TIMEOUT_MS = 15_000;
const BODY_LIMIT = 1024 * 1024;

const logs: string[] = [];
const relay = await startRelay({
  config: { server: { host: '127.0.0.1', drainTimeoutMs: 5_000, bodyLimitBytes: BODY_LIMIT } },
  logLevel: 'error',
  logStream: { write: (line: string) => { logs.push(line); } },
});
const up = await startFakeUpstream({ record: 1 });
t.teardown(async () => {
  await relay.close();
  await up.close();
});

// Something of every kind, and a logged request, so generated ids sometimes name real things.
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'fuzz-control' });
const rateLimit = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: 'rl' }, spec: { requestsPerMinute: 1000 } });
const pricing = await relay.api('POST', '/api/pricings', { metadata: { displayName: 'pr' }, spec: { modelId: seeded.modelId, currency: 'USD', inputPerMillion: 1, outputPerMillion: 2 } });
const served = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'fuzz-control', messages: [{ role: 'user', content: 'hi' }] });
const ids = [seeded.providerId, seeded.hostId, seeded.modelId, seeded.policyId, seeded.relayKeyId, ...seeded.hostKeyIds,
  rateLimit.body?.metadata?.id, pricing.body?.metadata?.id, served.headers.get('x-request-id')].filter((x): x is string => typeof x === 'string');
const ctx: SchemaContext = { ids };
/** The seeded entity of each kind, for by-id routes that must find one. */
const idOfKind: Record<string, string | undefined> = {
  providers: seeded.providerId, hosts: seeded.hostId, models: seeded.modelId, policies: seeded.policyId,
  'relay-keys': seeded.relayKeyId, 'host-keys': seeded.hostKeyIds[0], 'rate-limits': rateLimit.body?.metadata?.id, pricings: pricing.body?.metadata?.id,
};

interface Operation {
  method: string;
  path: string;
  parameters: Array<{ in: string; name: string; schema?: Schema; required?: boolean }>;
  body?: Schema;
}

const doc = (await relay.api('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, any>> };
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops)
  .filter(([method]) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
  .map(([method, op]) => ({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], body: op.requestBody?.content?.['application/json']?.schema })));

const RAW_PATH_VALUES = ['', ' ', '..', '%2e%2e', 'a/b', '%00', '\u0000', 'é', '\u{1F600}', 'x'.repeat(5_000), '00000000-0000-0000-0000-000000000000', 'null', '-1', '1e309'];

function pathValue(): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom(...ids), fc.uuid(), fc.string({ maxLength: 40 }), fc.constantFrom(...RAW_PATH_VALUES));
}

function queryValue(schema: Schema | undefined, hostile: boolean): fc.Arbitrary<string> {
  const base = hostile ? hostileFor(schema, ctx) : validFor(schema, ctx);
  return fc.oneof(
    base.map((v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '')),
    fc.constantFrom('>=400', '5xx', '<=abc', '24h', '-1h', '99999999999d', '2026-13-45T99:99:99Z', 'NaN', '', '%', 'x'.repeat(10_000)),
  );
}

interface Case {
  url: string;
  body?: Buffer;
}

function caseFor(op: Operation): fc.Arbitrary<Case> {
  const hostile = fc.boolean();
  return hostile.chain((h) => {
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const queryParams = op.parameters.filter((p) => p.in === 'query');
    const params = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, pathValue()])));
    const query = fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p.schema, h)])), { requiredKeys: [] });
    const bodyValue = op.body ? (h ? hostileFor(op.body, ctx) : validFor(op.body, ctx)) : fc.constant(undefined);
    const rawBody = fc.oneof(
      { weight: 8, arbitrary: bodyValue.map((v) => (v === undefined ? undefined : Buffer.from(toJsonText(v)))) },
      { weight: 1, arbitrary: fc.constantFrom(Buffer.from('{"metadata":'), Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), Buffer.from('[]'), Buffer.from('null'), Buffer.from('"'), Buffer.from('{"a":' + '['.repeat(5_000) + ']'.repeat(5_000) + '}')) },
    );
    return fc.record({ params, query, body: op.method === 'GET' || op.method === 'DELETE' ? fc.constant(undefined) : rawBody }).map(({ params, query, body }) => {
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String((params as Record<string, string>)[name] ?? '')));
      const qs = new URLSearchParams(query as Record<string, string>).toString();
      return { url: `${path}${qs ? `?${qs}` : ''}`, body };
    });
  });
}

async function send(method: string, url: string, body?: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; contentType: string | null; text: string }> {
  const res = await fetch(relay.controlUrl + url, {
    method,
    headers: { authorization: `Bearer ${relay.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), text: await res.text() };
}

function judge(got: { status: number; contentType: string | null; text: string }): string | null {
  // Node's HTTP parser refuses a request line plus headers over 16 KiB before Relay sees it.
  if (got.status === 431) return null;
  if (got.status >= 500) return `status ${got.status}: ${got.text.slice(0, 300)}`;
  if (got.status >= 400) {
    if (!/^application\/json/.test(got.contentType ?? '')) return `status ${got.status} with content-type ${got.contentType}`;
    try {
      const body = JSON.parse(got.text) as { error?: { code?: unknown; message?: unknown } };
      if (typeof body.error?.code !== 'string' || typeof body.error.message !== 'string') return `status ${got.status} without an error body: ${got.text.slice(0, 200)}`;
    } catch {
      return `status ${got.status} with a body that is not JSON`;
    }
  }
  return null;
}

let badInputs = 0;
const statuses = new Map<number, number>();

t.test('every operation of the control API, with generated and schema-violating input', async (t) => {
  t.ok(operations.length >= 50, `${operations.length} operations in /api/openapi.json`);
  const findings: string[] = [];
  for (const [i, op] of operations.entries()) {
    for (const c of fc.sample(caseFor(op), { seed: SEED + i, numRuns: CASES_PER_OPERATION })) {
      badInputs++;
      let problem: string | null;
      try {
        const got = await send(op.method, c.url, c.body);
        statuses.set(got.status, (statuses.get(got.status) ?? 0) + 1);
        problem = judge(got);
      } catch (err) {
        problem = `no answer: ${(err as Error).name} ${(err as Error).message}`;
      }
      if (problem) findings.push(`${op.method} ${c.url.slice(0, 120)} body ${c.body?.toString('utf8').slice(0, 120)}: ${problem}`);
    }
  }
  t.same(findings.slice(0, 30), [], `${operations.length * CASES_PER_OPERATION} requests: no 5xx, every 4xx a JSON error`);
});

t.test('every free-form field of every body, nested 5,000 levels deep in an otherwise valid body', async (t) => {
  const withBody = operations.filter((op) => op.body !== undefined && op.method !== 'GET' && op.method !== 'DELETE');
  const findings: string[] = [];
  let sent = 0;
  for (const [i, op] of withBody.entries()) {
    for (const value of fc.sample(deepFreeFormFor(op.body, ctx), { seed: SEED + i, numRuns: DEEP_CASES_PER_OPERATION })) {
      const body = toJsonText(value);
      if (body === JSON.stringify(value)) continue;
      badInputs++;
      sent++;
      const kind = /^\/api\/([a-z-]+)\//.exec(op.path)?.[1] ?? '';
      const url = op.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(idOfKind[kind] ?? ids[0]!));
      const got = await send(op.method, url, Buffer.from(body)).catch((err: Error) => ({ status: 0, contentType: null, text: `no answer: ${err.message}` }));
      statuses.set(got.status, (statuses.get(got.status) ?? 0) + 1);
      const problem = got.status === 0 ? got.text : judge(got);
      if (problem) findings.push(`${op.method} ${url}: ${problem}`);
    }
  }
  t.ok(sent >= 8, `${sent} bodies with a free-form field nested deep`);
  t.same(findings.slice(0, 30), [], 'no 5xx, every 4xx a JSON error');
});

t.test('wrong content types, an oversized body, huge headers, bad percent-encoding', async (t) => {
  const valid = Buffer.from(JSON.stringify({ metadata: { displayName: 'ct' }, spec: { adapter: 'openai' } }));
  const cases: Array<{ what: string; method?: string; url?: string; headers?: Record<string, string>; body?: Buffer; status: number[] }> = [
    { what: 'text/plain', headers: { 'content-type': 'text/plain' }, body: valid, status: [415] },
    { what: 'multipart/form-data', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: Buffer.from('--x\r\n\r\n--x--\r\n'), status: [415] },
    { what: 'application/x-www-form-urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('a=b'), status: [415] },
    { what: 'invalid UTF-8 in the body', body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), status: [400] },
    { what: 'a body over the limit', body: Buffer.alloc(BODY_LIMIT + 1024, 0x20), status: [413] },
    { what: 'a bad percent-encoding in the path', method: 'GET', url: '/api/providers/%E0%A4%A', status: [400, 404] },
    { what: 'a bad percent-encoding in the query', method: 'GET', url: '/api/providers?q=%', status: [200, 400] },
  ];
  for (const c of cases) {
    badInputs++;
    const got = await send(c.method ?? 'POST', c.url ?? '/api/providers', c.body, c.headers).catch((err: Error) => ({ status: 0, contentType: null, text: err.message }));
    t.ok(c.status.includes(got.status), `${c.what}: ${got.status} (expected ${c.status.join(' or ')}) ${got.text.slice(0, 200)}`);
    if (got.status >= 400) t.equal(judge(got), null, `${c.what}: a JSON error`);
  }
  badInputs++;
  const huge = await send('GET', '/api/providers', undefined, { 'x-filler': 'a'.repeat(64 * 1024) }).catch((err: Error) => ({ status: 0, contentType: null, text: err.message }));
  t.ok([431, 400].includes(huge.status), `64 KiB of headers: ${huge.status} from Node`);
});

t.test('the control plane is healthy afterwards and logged no internal error', async (t) => {
  t.equal((await send('GET', '/api/auth/whoami')).status, 200, 'answers');
  const internal = logs.filter((l) => /RELAY_ERR_INTERNAL|"level":(50|60)/.test(l));
  t.same(internal.map((l) => l.slice(0, 600)), [], 'no error-level log line');
  recordCounters('fuzz-control', { badInputs, operations: operations.length, ...Object.fromEntries([...statuses].map(([s, n]) => [`status${s}`, n])) });
});
