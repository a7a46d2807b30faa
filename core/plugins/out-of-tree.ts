// What an out-of-tree plugin (loaded by path or package name) needs when the kernel runs
// compiled: TypeScript sources load through tsx, and `relay-gateway` resolves to this kernel's
// own plugin API. Registered once, on the first such plugin: a deployment with only built-in
// plugins runs with no module loader hooks at all.
import { register } from 'node:module';

const compiled = import.meta.url.endsWith('.js');
let prepared = false;

export async function prepareOutOfTreeImport(): Promise<void> {
  if (!compiled || prepared) return;
  prepared = true;
  const tsx = await import('tsx/esm/api');
  tsx.register();
  // Registered after tsx, so it runs first in the resolve chain.
  register(new URL('./self-resolve-hooks.js', import.meta.url), { data: { api: new URL('../plugin-api.js', import.meta.url).href } });
}
