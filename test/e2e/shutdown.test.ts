// Graceful shutdown (what SIGTERM runs): new connections are refused, an in-flight stream
// finishes, and its usage event is flushed to the log backend before close() resolves.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const upstream = await startFakeUpstream({ chunks: 10, chunkDelayMs: 100 });
const relay = await startRelay({ dataDir: undefined });
t.teardown(async () => {
  await relay.close();
  await upstream.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'slow' });

function logFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

t.test('an in-flight stream finishes and its event is flushed', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  const requestId = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.notOk(first.done, 'the stream started');
  const closing = relay.relay.close();
  // New connections are refused while draining.
  await eventually(async () => {
    try {
      await fetch(`${relay.inferenceUrl}/healthz`);
      return false;
    } catch {
      return true;
    }
  }, 2_000, 20);
  let text = Buffer.from(first.value!).toString();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
  }
  t.match(text, /data: \[DONE\]/, 'the stream ran to its end');
  await closing;
  const logged = logFiles(relay.dataDir).map((f) => readFileSync(f, 'utf8')).join('');
  t.match(logged, requestId, 'the usage event was flushed before close() resolved');
});
