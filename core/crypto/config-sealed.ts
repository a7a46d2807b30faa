// Sealed values written into the config file (payload-s3's `credentials.sealed`) are not in the
// database, so a master-key rotation cannot re-seal them. This finds them, by JSON pointer, so the
// rotation can name what the operator must re-seal (`relay master-key seal`). Never the values.
import { Sealer } from './sealing.ts';

/** JSON pointers of the string values in `config` sealed under master key `keyId`. */
export function configValuesSealedUnder(config: unknown, keyId: string): string[] {
  const found: string[] = [];
  const walk = (value: unknown, pointer: string): void => {
    if (typeof value === 'string') {
      if (Sealer.keyIdOf(value) === keyId) found.push(pointer || '/');
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${pointer}/${i}`));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) walk(item, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    }
  };
  walk(config, '');
  return found;
}
