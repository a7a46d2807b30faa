// Which of a client's headers go on to the upstream in passthrough (filterForwardHeaders): the same
// names again, in other cases, names too long to keep, and more distinct names than it keeps.
import t from 'tap';
import { filterForwardHeaders } from '../../core/http/headers.ts';

t.test('filterForwardHeaders: hop-by-hop, credentials and x-gw-* stay; the rest go on in lower case', async (t) => {
  const client = {
    Host: 'relay', Connection: 'keep-alive', 'Content-Length': '12', 'Accept-Encoding': 'gzip', TE: 'trailers',
    Authorization: 'Bearer rk_secret', 'X-Api-Key': 'sk-secret', Cookie: 'a=b', 'X-GW-Host': 'h', 'x-gw-anything': '1',
    'Anthropic-Version': '2023-06-01', 'anthropic-beta': 'a,b', 'User-Agent': 'claude-cli', Accept: ['a', 'b'], Skipped: undefined,
  };
  const expected = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'a,b', 'user-agent': 'claude-cli', accept: 'a, b' };
  t.same(filterForwardHeaders(client), expected, 'first time');
  t.same(filterForwardHeaders(client), expected, 'the same names again (remembered)');
  t.same(filterForwardHeaders({ AUTHORIZATION: 'x', 'x-GW-host': 'y', 'ANTHROPIC-VERSION': 'v' }), { 'anthropic-version': 'v' }, 'the same names in other cases');
});

t.test('filterForwardHeaders: past the names it keeps, still decided name by name', async (t) => {
  const long = `X-${'Long'.repeat(20)}`;
  t.same(filterForwardHeaders({ [long]: 'v' }), { [long.toLowerCase()]: 'v' }, 'a name too long to keep');
  t.same(filterForwardHeaders({ [long]: 'w' }), { [long.toLowerCase()]: 'w' }, 'and again');
  t.same(filterForwardHeaders({ 'x-\ud800': 'v' }), { 'x-\ud800': 'v' }, 'a name latin1 cannot hold');
  t.same(filterForwardHeaders({ 'x-\ufffd': 'v' }), { 'x-\ufffd': 'v' }, 'is not confused with another');
  for (let i = 0; i < 1100; i++) filterForwardHeaders({ [`x-made-up-${i}`]: 'v' });
  t.same(filterForwardHeaders({ 'X-Made-Up-Late': 'v', 'Proxy-Authorization': 'secret', 'X-GW-Late': 'g' }), { 'x-made-up-late': 'v' });
});

