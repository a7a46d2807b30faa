// Module resolve hook (see register.mjs): a test tool that Relay's node_modules lacks resolves
// from test/tools/node_modules. Only the packages listed in test/tools/package.json, and only
// after the usual resolution failed.
import { readFileSync } from 'node:fs';

const toolsPackage = new URL('./package.json', import.meta.url);
const tools = Object.keys(JSON.parse(readFileSync(toolsPackage, 'utf8')).dependencies);

const isTool = (specifier) => tools.some((name) => specifier === name || specifier.startsWith(`${name}/`));

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (err) {
    // Any failure, not only ERR_MODULE_NOT_FOUND: a resolver earlier in the chain (ts-node's, when
    // tap loads @tapjs/typescript) throws its not-found error without a code.
    if (!isTool(specifier)) throw err;
    return nextResolve(specifier, { ...context, parentURL: toolsPackage.href });
  }
}
