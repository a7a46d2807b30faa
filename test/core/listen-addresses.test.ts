// The two listeners' bind addresses (issue 39 #11): inference on every interface by default, the
// control port (admin API, dashboard, /metrics) on loopback unless server.controlHost opens it.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { AddressInfo } from 'node:net';
import { loadConfigFile } from '../../core/config/load.ts';
import { startRelay } from '../../core/testing.ts';
import { DUMMY_ENV } from '../support/relay-check.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PLUGINS = [{ use: 'auth-bearer' }, { use: 'log-file' }];
const bound = (server: { address(): unknown }) => (server.address() as AddressInfo).address;

t.test('by default inference binds every interface and the control port loopback only', async (t) => {
  const relay = await startRelay({ plugins: PLUGINS, config: { server: { host: '0.0.0.0' } } });
  t.teardown(() => relay.close());
  t.equal(bound(relay.relay.inference.server), '0.0.0.0', 'inference on all interfaces');
  t.equal(bound(relay.relay.control.server), '127.0.0.1', 'control on loopback');
  t.equal((await fetch(`${relay.controlUrl}/api/version`)).status, 200, 'and reachable there');
});

t.test('server.controlHost is the control port\'s own setting', async (t) => {
  const relay = await startRelay({ plugins: PLUGINS, config: { server: { host: '127.0.0.1', controlHost: '0.0.0.0' } } });
  t.teardown(() => relay.close());
  t.equal(bound(relay.relay.inference.server), '127.0.0.1');
  t.equal(bound(relay.relay.control.server), '0.0.0.0');
});

t.test('the shipped configs: loopback for a single machine, RELAY_CONTROL_HOST opens it; the scaled one opens it', async (t) => {
  for (const file of ['config/relay.yaml', 'examples/config/embedded.yaml']) {
    t.equal(loadConfigFile(path.join(root, file), {}).config.server.controlHost, '127.0.0.1', file);
    t.equal(loadConfigFile(path.join(root, file), { RELAY_CONTROL_HOST: '0.0.0.0' }).config.server.controlHost, '0.0.0.0', `${file} with RELAY_CONTROL_HOST`);
    t.equal(loadConfigFile(path.join(root, file), {}).config.server.host, '0.0.0.0', `${file}: inference on every interface`);
  }
  t.equal(loadConfigFile(path.join(root, 'examples/config/scaled.yaml'), DUMMY_ENV).config.server.controlHost, '0.0.0.0', 'scaled: the pod network');
});
