// A host's extra headers may carry credentials (an API gateway's subscription key in front of the
// vendor: ocp-apim-subscription-key, cf-aig-authorization, helicone-auth...). With RELAY_MASTER_KEY
// set, each value is stored sealed in place: spec.headers[name] holds `v1.<keyId>.…`
// (core/crypto/sealing.ts, as budget webhook URLs are), in the database, the snapshot, the local
// snapshot file and the catalog file. It is opened only to send it upstream (sendable-host.ts,
// once per host version) and to show it to an admin; a viewer sees the names and a fixed mask.
// Without a master key values stay plaintext and start-up warns. Values stored before sealing
// are read as they are and sealed at the next start with a key (or at the host's next write).
import type { Logger } from 'pino';
import type { AnyEntity } from './snapshot.ts';
import { MASKED_HEADER_VALUE, headerValueProblem, isSealedForm } from './kinds.ts';
import type { SpecToStore, SpecWriter } from '../control/catalog-routes.ts';
import type { Database } from '../db/types.ts';
import { safeEqual } from '../crypto/relay-keys.ts';
import { Sealer } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { resealStored, type ResealResult } from '../crypto/reseal-stored.ts';

type Headers = Record<string, string>;

/** The value a stored one stands for; throws when it is sealed under a key this instance lacks. */
export function openHeaderValue(sealer: Sealer, stored: string): string {
  return isSealedForm(stored) ? sealer.open(stored) : stored;
}

function opens(sealer: Sealer, stored: string): string | null {
  try {
    return openHeaderValue(sealer, stored);
  } catch {
    return null;
  }
}

/** What a caller is shown of stored headers: names always; values opened for an admin, the mask for a viewer. */
export function shownHostHeaders(sealer: Sealer, headers: Headers, whole: boolean): Headers {
  const out: Headers = {};
  // Sealed under a master key this instance lacks: an admin is shown it as stored, and may send it back unchanged.
  for (const [name, stored] of Object.entries(headers)) out[name] = whole ? opens(sealer, stored) ?? stored : MASKED_HEADER_VALUE;
  return out;
}

/**
 * `headers` (a host spec's, as a caller or a catalog file gives them) as they are stored: a value
 * already stored (`current`, by name) keeps its stored form; a new plaintext value is sealed when
 * a master key is set; a sealed one must open to a value that can be sent, and is re-sealed only
 * when under another key than the current one. Anything else is left for the spec's validation to refuse.
 */
export function headersToStore(sealer: Sealer, headers: unknown, current: Headers = {}, pointer = '/spec/headers'): unknown {
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return headers;
  const out: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(headers as Record<string, unknown>)) {
    out[name] = typeof given === 'string' ? valueToStore(sealer, given, storedOf(current, name), `${pointer}/${pointerSegment(name)}`) : given;
  }
  return out;
}

function valueToStore(sealer: Sealer, given: string, stored: string | undefined, pointer: string): string {
  if (stored === given && (isSealedForm(given) || !sealer.enabled)) return given;
  let value = given;
  if (isSealedForm(given)) {
    try {
      value = sealer.open(given);
    } catch (err) {
      throw badValue(pointer, `is sealed but does not open with this instance's RELAY_MASTER_KEY (${(err as Error).message}); seal the value again with relay master-key seal`);
    }
    const problem = headerValueProblem(value);
    if (problem) throw badValue(pointer, `opens to a ${problem.replace(/^value /, 'value that ')}`);
    // Sealed under the current key (a catalog file's): stored as given, so the file round-trips.
    if (Sealer.keyIdOf(given) === sealer.currentKeyId) return given;
  } else if (headerValueProblem(given) !== null) {
    return given;
  }
  // The same value as stored: its ciphertext stays (no change to write, no diff in a catalog file).
  if (sealer.enabled && stored !== undefined && isSealedForm(stored) && safeEqual(opens(sealer, stored) ?? '', value)) return stored;
  return sealer.enabled ? sealer.seal(value) : value;
}

/** Names are stored lowercased; a caller may send them in another case. */
function storedOf(current: Headers, name: string): string | undefined {
  return Object.hasOwn(current, name) ? current[name] : Object.hasOwn(current, name.toLowerCase()) ? current[name.toLowerCase()] : undefined;
}

/** A JSON pointer segment (RFC 6901). */
function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function badValue(field: string, message: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: ${message}`, { field });
}

/** The admin API's writer for hosts: headers as headersToStore stores them. */
export function hostWriter(sealer: Sealer): SpecWriter {
  const write = (spec: Record<string, unknown>, current: Headers): SpecToStore => (
    spec.headers === undefined || spec.headers === null ? { spec } : { spec: { ...spec, headers: headersToStore(sealer, spec.headers, current) } });
  return {
    forCreate: (spec) => write(spec, {}),
    forUpdate: (current: AnyEntity, patch) => write(patch, (current.spec as { headers?: Headers }).headers ?? {}),
  };
}

export type HeaderSealResult = ResealResult;

/**
 * Seals every stored plaintext host header value, and re-seals those under RELAY_MASTER_KEY_PREVIOUS
 * (a rotation), in one transaction; without a master key, only counts the hosts with plaintext ones.
 */
export function sealStoredHostHeaders(db: Database, sealer: Sealer): Promise<HeaderSealResult> {
  return resealStored<{ headers?: Headers }>(db, sealer, {
    select: `SELECT id, spec FROM catalog_entities WHERE kind = 'hosts' AND jsonb_typeof(spec->'headers') = 'object' AND spec->'headers' <> '{}'::jsonb
       ORDER BY id FOR UPDATE`,
    member: 'headers',
    values: (spec) => stringEntries(spec.headers).map(([, value]) => value),
    rebuild: (spec, values) => Object.fromEntries(stringEntries(spec.headers).map(([name], i) => [name, values[i]])),
  });
}

function stringEntries(headers: Headers | undefined): [string, string][] {
  return Object.entries(headers ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
}

/** At start-up: seal what is plaintext (or under the previous key), and say what is left. Counts only, never values. */
export async function sealHostHeadersAtStartup(db: Database, sealer: Sealer, log: Logger): Promise<HeaderSealResult> {
  const result = await sealStoredHostHeaders(db, sealer);
  if (result.sealed > 0) log.info({ hosts: result.sealed, keyId: sealer.currentKeyId }, `sealed the header values of ${result.sealed} host(s) under the master key`);
  if (result.plaintext > 0) {
    log.warn({ hosts: result.plaintext }, 'RELAY_MASTER_KEY is not set: host header values are stored unsealed (set the master key to seal them)');
  }
  if (result.unknownKey > 0) {
    log.warn({ hosts: result.unknownKey }, 'some host header values are sealed under a master key that is neither current nor previous; requests to those hosts are refused until they are set again');
  }
  return result;
}
