import t from 'tap';
import { mkdir, mkdtemp, readdir, rm, statfs, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FilePayloadBackend, fileNameOf } from '../../plugins/payload-file/file-payload-backend.ts';
import plugin from '../../plugins/payload-file/index.ts';
import { payloadBackendSuite } from '../support/payload-backend-suite.ts';
import { capturedPayload } from '../support/observer-fixtures.ts';

t.test('conformance', async (t) => {
  payloadBackendSuite(t, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-payload-file-'));
    return { backend: new FilePayloadBackend({ dir, retentionDays: 30 }), cleanup: () => rm(dir, { recursive: true, force: true }) };
  });
});

t.test('day folders, unsafe ids, retention', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-payload-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const backends: FilePayloadBackend[] = [];
  await plugin.register({ dataDir: dir, hooks: { addPayloadBackend: (b: FilePayloadBackend) => backends.push(b) } } as never, { dir: 'payloads', retentionDays: 2, minFreeBytes: 0 });
  const backend = backends[0];
  const old = capturedPayload('old', { captured_at: new Date(Date.now() - 5 * 86_400_000).toISOString() });
  await backend.write([capturedPayload('first')]); // runs the hourly retention check, with nothing to do
  await backend.write([old]);
  t.same(await backend.get('old'), old, 'found in its day folder');
  const weird = capturedPayload('a/../../b');
  const fresh = new FilePayloadBackend({ dir: path.join(dir, 'payloads'), retentionDays: 2 });
  await fresh.write([weird]);
  t.same(await fresh.get('a/../../b'), weird);
  const days = await readdir(path.join(dir, 'payloads'));
  t.equal(days.length, 1, 'the expired day folder was removed on write');
  t.same(await readdir(path.join(dir, 'payloads', days[0])).then((f) => f.some((n) => n.startsWith('sha256-'))), true, 'an unsafe id is stored under its hash');
});

t.test('a write that fails on a full disk leaves no temporary file behind', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-payload-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const backend = new FilePayloadBackend({ dir, retentionDays: 30 });
  const payload = capturedPayload('full-disk');
  // The temporary file's name leads to /dev/full, whose every write fails with ENOSPC, as on a full disk.
  const dayDir = path.join(dir, payload.captured_at.slice(0, 10));
  await mkdir(dayDir, { recursive: true });
  await symlink('/dev/full', path.join(dayDir, `${fileNameOf(payload.request_id)}.${process.pid}.tmp`));
  await t.rejects(backend.write([payload]), { code: 'ENOSPC' });
  t.same(await readdir(dayDir), [], 'the temporary file is removed');
  t.equal(await backend.get('full-disk'), null);
  await backend.write([payload]);
  t.same(await backend.get('full-disk'), payload, 'the retry writes it once there is room');
});

t.test('payloads leave a reserve of free space to usage records: a batch that would go below it is refused, not retried', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-payload-file-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { bavail, bsize } = await statfs(dir);
  const free = bavail * bsize;
  const short = new FilePayloadBackend({ dir, retentionDays: 30, minFreeBytes: free + 2 ** 40 });
  await t.rejects(short.write([capturedPayload('over-reserve')]), { code: 'RELAY_PAYLOAD_DISK_RESERVE', retryable: false, message: /reserve kept for usage records/ });
  t.equal(await short.get('over-reserve'), null, 'nothing written');
  const roomy = new FilePayloadBackend({ dir, retentionDays: 30, minFreeBytes: 1 });
  await roomy.write([capturedPayload('within-reserve')]);
  t.ok(await roomy.get('within-reserve'), 'written while the disk has room above the reserve');
});
