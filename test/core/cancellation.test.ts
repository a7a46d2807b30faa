// A request's cancellation (core/http/cancellation.ts): listeners hear one abort, the AbortSignal
// is made only when read and follows the abort either way round, and only the very request the
// kernel made is cancelled through it (a copy keeps the signal it read; an override wins).
import t from 'tap';
import { Cancellation, cancellationOf, withCancellation } from '../../core/http/cancellation.ts';
import type { Route, UpstreamRequest } from '../../core/hooks.ts';
import { UpstreamClient } from '../../core/http/upstream-client.ts';

const client = new UpstreamClient({ maxConnectionsPerOrigin: 1, connectTimeoutMs: 1000, keepAliveTimeoutMs: 1000 });
const fields = { route: {} as Route, shape: 'openai.chat', body: '{}', headers: {}, credential: null, stream: false };

t.test('listeners hear one abort with its reason; a removed one hears nothing; a late one hears it at once', async (t) => {
  const cancellation = new Cancellation();
  const heard: unknown[] = [];
  cancellation.onAbort((reason) => heard.push(['first', reason]));
  const stop = cancellation.onAbort((reason) => heard.push(['removed', reason]));
  stop();
  cancellation.abort('gone');
  cancellation.abort('again');
  t.same(heard, [['first', 'gone']]);
  t.equal(cancellation.aborted, true);
  cancellation.onAbort((reason) => heard.push(['late', reason]));
  t.same(heard[1], ['late', 'gone']);
});

t.test('the signal follows the abort, read before or after it', async (t) => {
  const before = new Cancellation();
  const early = before.signal;
  t.equal(early.aborted, false);
  before.abort('client left');
  t.equal(early.aborted, true);
  t.equal(early.reason, 'client left');
  const after = new Cancellation();
  after.abort('client left');
  t.equal(after.signal.aborted, true, 'made after the abort, it starts aborted');
  t.equal(after.signal, after.signal, 'one signal per cancellation');
  const plain = new Cancellation();
  plain.abort();
  t.equal((plain.reason as DOMException).name, 'AbortError', 'no reason given: an AbortError, as AbortController.abort()');
});

t.test('the kernel\'s request is cancelled through the cancellation; a copy or an override through its own signal', async (t) => {
  const cancellation = new Cancellation();
  const req = withCancellation(fields, { 'x-request-id': 'r1' }, client, cancellation);
  t.equal(cancellationOf(req), cancellation);
  t.same(req.headers, { 'x-request-id': 'r1' });
  t.equal(req.client, client);
  const copy: UpstreamRequest = { ...req, shape: 'openai.input_tokens' };
  t.equal(cancellationOf(copy), null, 'a copy is not the request the kernel made');
  t.equal(copy.signal, cancellation.signal, 'the copy read the cancellation\'s signal');
  const other = new AbortController();
  const overridden: UpstreamRequest = { ...req, signal: other.signal };
  t.equal(cancellationOf(overridden), null);
  cancellation.abort('client left');
  t.equal(copy.signal.aborted, true, 'the copy\'s signal aborts with the request');
  t.equal(overridden.signal.aborted, false, 'an override keeps its own');
});

t.teardown(() => client.close());
