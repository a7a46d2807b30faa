// An in-house plugin whose `relay-gateway` is another copy than the Relay running it (npm
// installing the peer dependency, a link to another checkout) is refused at start, naming both
// folders: such a plugin would load, but its RelayError is not the kernel's, so the 400 it throws
// for a client's mistake would reach the client as a 500. Linked to this Relay, it loads.
import t from 'tap';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadPlugins } from '../../core/plugins/loader.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const where = '/etc/relay/relay.yaml';
const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'relay-gateway-copy-')));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// A second relay-gateway package: it works (it re-exports the API), but it is not this Relay.
const copy = path.join(dir, 'copy');
mkdirSync(copy);
writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ name: 'relay-gateway', type: 'module', exports: { '.': './index.js' } }));
writeFileSync(path.join(copy, 'index.js'), `export * from ${JSON.stringify(pathToFileURL(path.join(root, 'core/plugin-api.ts')).href)};\n`);

function plugin(name: string, gateway: string): void {
  mkdirSync(path.join(dir, name, 'node_modules'), { recursive: true });
  symlinkSync(gateway, path.join(dir, name, 'node_modules/relay-gateway'));
  writeFileSync(path.join(dir, name, 'index.ts'), `import { definePlugin, Type } from 'relay-gateway';
export default definePlugin({ name: '${name}', kind: 'other', options: Type.Object({}, { additionalProperties: false }), register() {} });
`);
}
plugin('inhouse-copy', copy);
plugin('inhouse-linked', root);

t.test('a plugin importing another copy of relay-gateway is refused at start, naming both', async (t) => {
  await t.rejects(loadPlugins([{ use: './inhouse-copy' }], dir, where), {
    name: 'StartupError',
    message: `${where}: /plugins/0/use: plugin "./inhouse-copy" would import relay-gateway from ${copy}, not from the Relay that runs it (${realpathSync(root)}): ` +
      'its errors would reach clients as 500s. Make that node_modules/relay-gateway a link to this Relay, or remove it (plugins/README.md, "Deploying an in-house plugin")',
  });
});

t.test('a plugin whose relay-gateway links to this Relay loads', async (t) => {
  const loaded = await loadPlugins([{ use: './inhouse-linked' }], dir, where);
  t.equal(loaded[0]?.plugin.name, 'inhouse-linked');
});
