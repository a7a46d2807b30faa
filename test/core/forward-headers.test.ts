// Which of a client's headers go on to the upstream in passthrough (filterForwardHeaders), and the
// request head the lean client writes from them: both remember what they decided per header name
// (header-name-verdicts.ts), so the tests send the same names again, in other cases, names too long
// to keep, and more distinct names than they keep.
import t from 'tap';
import { filterForwardHeaders } from '../../core/http/headers.ts';
import { requestHead } from '../../core/http/lean-client/outbound-request.ts';

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

t.test('requestHead: names checked once and remembered, refusals every time', async (t) => {
  const head = (headers: Record<string, string>) => requestHead({ method: 'POST', path: '/v1/messages', headers, timeoutMs: 0 }, 'up:1', 2);
  for (let round = 0; round < 2; round++) {
    t.equal(head({ 'x-api-key': 'k', Host: 'vendor.example', 'Content-Length': '99', Connection: 'close', 'anthropic-version': 'v' }),
      'POST /v1/messages HTTP/1.1\r\nhost: vendor.example\r\nconnection: keep-alive\r\nx-api-key: k\r\nanthropic-version: v\r\ncontent-length: 2\r\n\r\n', `round ${round + 1}`);
    t.throws(() => head({ 'bad name': 'v' }), { code: 'UND_ERR_INVALID_ARG' }, 'a name that is not a token');
    t.throws(() => head({ 'Transfer-Encoding': 'chunked' }), /invalid transfer-encoding header/, 'a header the client frames itself');
    t.throws(() => head({ Connection: 'upgrade' }), /invalid connection header/, 'connection other than keep-alive or close');
    t.throws(() => head({ 'x-ok': 'a\r\nx-injected: 1' }), /invalid x-ok header/, 'CR LF in a value of a remembered name');
  }
  for (let i = 0; i < 1100; i++) head({ [`x-made-up-${i}`]: 'v' });
  t.throws(() => head({ 'also bad': 'v' }), { code: 'UND_ERR_INVALID_ARG' }, 'past the names it keeps, still checked');
  t.match(head({ 'X-Late': 'v' }), /\r\nX-Late: v\r\n/);
});
