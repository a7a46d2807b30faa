// The plugin loader: built-in names, paths relative to the config file, dependency order, and
// clear start-up errors for everything a config can get wrong.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlugins } from '../../core/plugins/loader.ts';
import { StartupError } from '../../core/errors.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.join(here, '../fixtures/plugins');
const where = '/etc/relay/relay.yaml';

t.test('built-ins load by name with defaults filled in', async (t) => {
  const loaded = await loadPlugins([{ use: 'wire-vendor-a' }, { use: 'auth-bearer' }], fixtures, where);
  t.same(loaded.map((p) => p.plugin.name), ['wire-vendor-a', 'auth-bearer']);
  t.same(loaded[0].options, { prefix: '/vendor-a' });
  t.equal(loaded[0].source, 'builtin');
});

t.test('a plugin outside plugins/ loads by path relative to the config file', async (t) => {
  const loaded = await loadPlugins([{ use: '../../../examples/log-sink-http', options: { url: 'http://127.0.0.1:9/x' } }], fixtures, where);
  t.equal(loaded[0].plugin.name, 'log-sink-http');
  t.match(loaded[0].source, /examples\/log-sink-http\/index\.ts$/);
});

t.test('a typo in an option names its JSON pointer', async (t) => {
  await t.rejects(loadPlugins([{ use: 'auth-bearer' }, { use: 'wire-vendor-a', options: { prefx: '/openai' } }], fixtures, where),
    new StartupError(`${where}: /plugins/1/options/prefx: unknown option "prefx" (plugin wire-vendor-a)`));
  await t.rejects(loadPlugins([{ use: 'wire-vendor-a', options: { prefix: 42 } }], fixtures, where),
    { name: 'StartupError', message: /\/plugins\/0\/options\/prefix: expected string/ });
});

t.test('unknown plugins, missing files and non-plugins are clear errors', async (t) => {
  await t.rejects(loadPlugins([{ use: 'wire-vendor-z' }], fixtures, where), { name: 'StartupError', message: `${where}: /plugins/0/use: unknown plugin "wire-vendor-z" (not a built-in plugin, a path, or an installed package)` });
  await t.rejects(loadPlugins([{ use: './nowhere' }], fixtures, where), { name: 'StartupError', message: /\/plugins\/0\/use: no plugin at / });
  await t.rejects(loadPlugins([{ use: './not-a-plugin.ts' }], fixtures, where), { name: 'StartupError', message: /does not default-export a plugin made with definePlugin/ });
  await t.rejects(loadPlugins([{ use: 'auth-bearer' }, { use: 'auth-bearer' }], fixtures, where), { name: 'StartupError', message: /plugin "auth-bearer" is listed twice/ });
});

t.test('dependencies: sorted, missing ones and cycles rejected', async (t) => {
  await t.rejects(loadPlugins([{ use: './needs-missing.ts' }], fixtures, where), { name: 'StartupError', message: /plugin "needs-missing" depends on "not-loaded", which the config does not load/ });
  await t.rejects(loadPlugins([{ use: './cycle-a.ts' }, { use: './cycle-b.ts' }], fixtures, where), { name: 'StartupError', message: /dependency cycle: cycle-a -> cycle-b -> cycle-a/ });
});

t.test('a disabled entry is skipped', async (t) => {
  const loaded = await loadPlugins([{ use: 'auth-bearer', enabled: false }, { use: 'wire-canonical' }], fixtures, where);
  t.same(loaded.map((p) => p.plugin.name), ['wire-canonical']);
});
