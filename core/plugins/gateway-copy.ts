// An out-of-tree plugin must import `relay-gateway` from the Relay that runs it: another copy
// (npm installing the peer dependency, a link to another checkout) loads, but its RelayError is
// not the kernel's, so every 4xx it throws reaches clients as a 500. Found where Node would look
// (the node_modules folders above the plugin) and refused at start.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { StartupError } from '../errors.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

/** The folder of the package.json nearest above `file` when that package is relay-gateway (Node's self-reference), else null. */
function selfReference(file: string): string | null {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'relay-gateway' ? realpathSync(dir) : null;
      } catch {
        return null;
      }
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/** Where `import 'relay-gateway'` in `file` leads, as Node's lookup finds it (its own package, then node_modules above), or null. */
function gatewayAbove(file: string): string | null {
  const self = selfReference(file);
  if (self !== null) return self;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', 'relay-gateway');
    if (existsSync(candidate)) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return null;
  }
}

/** The start-up error for a plugin file whose `relay-gateway` is not this Relay, or null. */
export function foreignGatewayProblem(file: string, where: string, pointer: string, use: string): StartupError | null {
  const found = gatewayAbove(file);
  const own = realpathSync(PACKAGE_ROOT);
  if (found === null || found === own) return null;
  return new StartupError(
    `${where}: ${pointer}/use: plugin "${use}" would import relay-gateway from ${found}, not from the Relay that runs it (${own}): ` +
      'its errors would reach clients as 500s. Make that node_modules/relay-gateway a link to this Relay, or remove it ' +
      '(plugins/README.md, "Deploying an in-house plugin")',
  );
}
