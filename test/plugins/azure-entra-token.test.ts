// vendor-azure-openai's Entra ID token cache on its own, against the fake token endpoint over
// real HTTP: concurrent requests share one token fetch, different secrets never share a token,
// a forgotten token is replaced, and a refusal names Entra's error without the secret.
import t from 'tap';
import type { Route, UpstreamRequest } from '../../core/plugin-api.ts';
import { createTestUpstreamClient } from '../../core/testing.ts';
import { EntraTokenCache } from '../../plugins/vendor-azure-openai/entra-token.ts';
import { startFakeAzure } from '../support/fake-azure.ts';

const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_ID = 'app-1';
const SECRET = 'the-right-secret';
const azure = await startFakeAzure({ entra: { tenantId: TENANT, clientId: CLIENT_ID, clientSecret: SECRET } });
const client = createTestUpstreamClient();
t.teardown(async () => {
  await client.close();
  await azure.close();
});

const entra = { tenantId: TENANT, clientId: CLIENT_ID, tokenUrl: `${azure.url}/${TENANT}/oauth2/v2.0/token` };
const request = (): UpstreamRequest => ({
  route: { host: { spec: { baseUrl: azure.url, timeoutMs: 5_000, enabled: true, providerId: 'p' } }, upstreamModel: 'd' } as unknown as Route,
  shape: 'openai.chat', body: '', headers: {}, credential: SECRET, stream: false, signal: new AbortController().signal, client,
});

t.test('concurrent requests share one fetch; the token is reused while fresh', async (t) => {
  const cache = new EntraTokenCache();
  const before = azure.tokenRequests.length;
  const results = await Promise.all(Array.from({ length: 5 }, () => cache.token(request(), entra, SECRET)));
  t.equal(azure.tokenRequests.length - before, 1, 'one token request for five callers');
  const tokens = new Set(results.map((r) => ('token' in r ? r.token : 'refused')));
  t.equal(tokens.size, 1, 'all got the same token');
  const again = await cache.token(request(), entra, SECRET);
  t.same('cached' in again && again.cached, true, 'then from the cache');
  t.equal(azure.tokenRequests.length - before, 1);
});

t.test('a forgotten token is fetched again; a wrong secret gets its own refusal', async (t) => {
  const cache = new EntraTokenCache();
  const first = await cache.token(request(), entra, SECRET);
  if (!('token' in first)) throw new Error('no token');
  cache.forget(entra, SECRET, first.token);
  const second = await cache.token(request(), entra, SECRET);
  t.ok('token' in second && second.token !== first.token && !second.cached, 'a new token after forget');

  const refused = await cache.token(request(), entra, 'a-wrong-secret');
  t.ok('refused' in refused, 'the wrong secret does not get the cached token');
  if ('refused' in refused) {
    t.equal(refused.refused.status, 401);
    t.match(refused.refused.message, /invalid_client: AADSTS7000215/);
    t.notMatch(refused.refused.message, /a-wrong-secret/);
  }
});

t.test('a token is refetched once the refresh point passes', async (t) => {
  let now = 1_000_000;
  const cache = new EntraTokenCache(() => now);
  const first = await cache.token(request(), entra, SECRET);
  now += 3599 * 1000 - 5 * 60_000 - 1;
  const stillCached = await cache.token(request(), entra, SECRET);
  t.ok('cached' in stillCached && stillCached.cached, 'cached until five minutes before expiry');
  now += 2;
  const refreshed = await cache.token(request(), entra, SECRET);
  t.ok('token' in refreshed && 'token' in first && refreshed.token !== first.token, 'then fetched again');
});
