// Captured payloads hold prompts and answers (customer data, credentials pasted into a prompt):
// payload-file writes them readable by Relay's own user only, whatever the process's umask, as
// the local catalog snapshot is. Real requests through the inference port; the files as written.
import t from 'tap';
import { readdir, stat } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const upstream = await startFakeUpstream();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'relay-payload-mode-'));
const relay = await startRelay({
  dataDir,
  plugins: [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }, { use: 'log-file' }, { use: 'payload-file', options: { minFreeBytes: 0 } }],
});
t.teardown(async () => {
  await relay.close();
  await upstream.close();
});

t.test('a captured payload file and its folders are readable by Relay\'s user only', async (t) => {
  const route = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'mode-model', relayKey: { payloadLoggingEnabled: true } });
  t.equal((await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 100_000 })).status, 200);
  await eventually(() => relay.relay.settings.get('payload-logging').enabled === true);
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${route.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mode-model', messages: [{ role: 'user', content: 'my card is 4111 1111 1111 1111' }] }),
  });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const id = res.headers.get('x-request-id')!;
  await eventually(async () => (await relay.api('GET', `/api/logs/${id}`)).body?.request_body !== undefined, 5_000, 50);
  const root = path.join(dataDir, 'payloads');
  const [day] = await readdir(root);
  const file = path.join(root, day, `${id}.json`);
  t.equal((await stat(file)).mode & 0o777, 0o600, 'the payload file: owner read and write only');
  t.equal((await stat(path.join(root, day))).mode & 0o077, 0, 'its day folder: nothing for group or others');
  t.equal((await stat(root)).mode & 0o077, 0, 'the payloads folder: nothing for group or others');
});
