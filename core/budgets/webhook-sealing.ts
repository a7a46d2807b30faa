// A budget's alert webhook URLs are credentials (Slack's and Teams' carry their token in the path).
// With RELAY_MASTER_KEY set, each is stored sealed in place: spec.alertWebhooks[].url holds
// `v1.<keyId>.…` (core/crypto/sealing.ts, as host-key values are sealed), in the database, the
// snapshot, the local snapshot file and the catalog file; it is opened only to deliver an alert
// and to show it to an admin. Without a master key URLs stay plaintext and start-up warns.
// URLs stored before sealing are read as they are and sealed at the next start with a key.
import type { Logger } from 'pino';
import type { AnyEntity } from '../catalog/snapshot.ts';
import { isSealedForm, isWebhookUrl, MAX_WEBHOOK_URL } from '../catalog/kinds.ts';
import type { SpecToStore, SpecWriter } from '../control/catalog-routes.ts';
import type { Database } from '../db/types.ts';
import { safeEqual } from '../crypto/relay-keys.ts';
import { Sealer } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { resealStored, type ResealResult } from '../crypto/reseal-stored.ts';
import { webhookTarget } from './webhook-delivery.ts';

interface StoredHook {
  url: string;
  format?: string;
}

/** The URL a stored value stands for; throws when it is sealed under a key this instance lacks. */
export function openWebhookUrl(sealer: Sealer, stored: string): string {
  return isSealedForm(stored) ? sealer.open(stored) : stored;
}

/** What a caller is shown of a stored URL: whole to an admin, its origin to a viewer. */
export function shownWebhookUrl(sealer: Sealer, stored: string, whole: boolean): string {
  try {
    const url = openWebhookUrl(sealer, stored);
    return whole ? url : webhookTarget(url);
  } catch {
    // Sealed under a master key this instance lacks: an admin may still send it back unchanged.
    return whole ? stored : '(sealed under another master key)';
  }
}

function opens(sealer: Sealer, stored: string): string | null {
  try {
    return openWebhookUrl(sealer, stored);
  } catch {
    return null;
  }
}

/**
 * `hooks` (a spec's alertWebhooks, as a caller or a catalog file gives them) as they are stored:
 * a URL already stored (`current`) keeps its stored form; a new plaintext URL is sealed when a
 * master key is set; a sealed one must open and hold an http(s) URL, and is re-sealed only when
 * under the previous key. Anything else is left for the spec's validation to refuse.
 */
export function webhooksToStore(sealer: Sealer, hooks: unknown, current: StoredHook[] = [], pointer = '/spec/alertWebhooks'): unknown {
  if (!Array.isArray(hooks)) return hooks;
  return hooks.map((hook: unknown, i) => {
    if (hook === null || typeof hook !== 'object' || typeof (hook as StoredHook).url !== 'string') return hook;
    const given = (hook as StoredHook).url;
    if (current.some((c) => c.url === given) && (isSealedForm(given) || !sealer.enabled)) return hook;
    let url = given;
    if (isSealedForm(given)) {
      try {
        url = sealer.open(given);
      } catch (err) {
        throw badUrl(`${pointer}/${i}/url`, `is sealed but does not open with this instance's RELAY_MASTER_KEY (${(err as Error).message}); seal the URL again with relay master-key seal`);
      }
      if (!isWebhookUrl(url)) throw badUrl(`${pointer}/${i}/url`, `opens to something that is not an absolute http:// or https:// URL of at most ${MAX_WEBHOOK_URL} characters`);
      // Sealed under the current key (a catalog file's): stored as given, so the file round-trips.
      if (Sealer.keyIdOf(given) === sealer.currentKeyId) return hook;
    } else if (!isWebhookUrl(given)) {
      return hook;
    }
    // The same URL as stored: its ciphertext stays (no change to write, no diff in a catalog file).
    const same = sealer.enabled ? current.find((c) => isSealedForm(c.url) && safeEqual(opens(sealer, c.url) ?? '', url)) : undefined;
    if (same) return { ...(hook as StoredHook), url: same.url };
    return { ...(hook as StoredHook), url: sealer.enabled ? sealer.seal(url) : url };
  });
}

function badUrl(field: string, message: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: ${message}`, { field });
}

/** The admin API's writer for budgets: alertWebhooks as webhooksToStore stores them. */
export function budgetWriter(sealer: Sealer): SpecWriter {
  const write = (spec: Record<string, unknown>, current: StoredHook[]): SpecToStore => (
    spec.alertWebhooks === undefined || spec.alertWebhooks === null ? { spec } : { spec: { ...spec, alertWebhooks: webhooksToStore(sealer, spec.alertWebhooks, current) } });
  return {
    forCreate: (spec) => write(spec, []),
    forUpdate: (current: AnyEntity, patch) => write(patch, ((current.spec as { alertWebhooks?: StoredHook[] }).alertWebhooks ?? [])),
  };
}

export type WebhookSealResult = ResealResult;

/**
 * Seals every stored plaintext webhook URL, and re-seals those under RELAY_MASTER_KEY_PREVIOUS
 * (a rotation), in one transaction; without a master key, only counts the plaintext ones.
 */
export function sealStoredWebhookUrls(db: Database, sealer: Sealer): Promise<WebhookSealResult> {
  return resealStored<{ alertWebhooks?: StoredHook[] }>(db, sealer, {
    select: `SELECT id, spec FROM catalog_entities WHERE kind = 'budgets'
         AND CASE WHEN jsonb_typeof(spec->'alertWebhooks') = 'array' THEN jsonb_array_length(spec->'alertWebhooks') ELSE 0 END > 0
       ORDER BY id FOR UPDATE`,
    member: 'alertWebhooks',
    values: (spec) => (spec.alertWebhooks ?? []).map((h) => h.url),
    rebuild: (spec, urls) => (spec.alertWebhooks ?? []).map((h, i) => ({ ...h, url: urls[i] })),
  });
}

/** At start-up: seal what is plaintext (or under the previous key), and say what is left. Counts only, never URLs. */
export async function sealWebhookUrlsAtStartup(db: Database, sealer: Sealer, log: Logger): Promise<WebhookSealResult> {
  const result = await sealStoredWebhookUrls(db, sealer);
  if (result.sealed > 0) log.info({ budgets: result.sealed, keyId: sealer.currentKeyId }, `sealed the alert webhook URLs of ${result.sealed} budget(s) under the master key`);
  if (result.plaintext > 0) {
    log.warn({ budgets: result.plaintext }, 'RELAY_MASTER_KEY is not set: budget alert webhook URLs are stored unsealed (set the master key to seal them)');
  }
  if (result.unknownKey > 0) {
    log.warn({ budgets: result.unknownKey }, 'some budget alert webhook URLs are sealed under a master key that is neither current nor previous; their alerts cannot be delivered');
  }
  return result;
}
