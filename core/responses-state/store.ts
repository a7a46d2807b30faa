// Relay's Responses state in its database (Postgres or PGlite, migration 005): the payload sealed
// under RELAY_MASTER_KEY, an owner per row, a retention sweep, and writes made before an answer's last byte.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { Principal } from '../hooks.ts';
import type { HostKeyMask } from '../pipeline/credential-scrub.ts';
import { RelayError } from '../errors.ts';
import type { ResponsesState, StoredResponse } from './types.ts';
import { indexedItemId as itemKey, responseIdProblem } from './ids.ts';
import { ForwardedOwners } from './forwarded-owners.ts';

const PLAIN = 'plain:';
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface ResponsesStateOptions {
  enabled: boolean;
  retentionHours: number;
  maxBytes: number;
  scope: 'relay-key' | 'policy';
  keepForwarded: boolean;
}

export class ResponsesStateStore implements ResponsesState {
  private readonly pending = new Set<Promise<void>>();
  private readonly sweeper: NodeJS.Timeout | null;
  private readonly owners: ForwardedOwners;

  constructor(private readonly db: Database, private readonly sealer: Sealer, private readonly log: Logger, private readonly options: ResponsesStateOptions) {
    this.owners = new ForwardedOwners(db, log, options.retentionHours);
    if (options.enabled && !sealer.enabled) log.warn('RELAY_MASTER_KEY is not set: stored Responses conversations are kept unsealed (set the master key to seal them)');
    this.sweeper = options.enabled ? setInterval(() => { void this.sweep(); }, SWEEP_EVERY_MS) : null;
    this.sweeper?.unref();
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  get maxBytes(): number {
    return this.options.maxBytes;
  }

  get keepForwarded(): boolean {
    return this.options.enabled && this.options.keepForwarded;
  }

  ownerOf(principal: Principal): string {
    return this.options.scope === 'policy' ? `policy:${principal.policy.metadata.id}` : `key:${principal.relayKey.metadata.id}`;
  }

  save(owner: string, id: string, stored: StoredResponse, ownItemIds: string[], keepOut: HostKeyMask | null): Promise<void> {
    if (!this.options.enabled) return Promise.resolve();
    let json = JSON.stringify(stored);
    // Masked in the text as written: one search of it, and every string and member name is covered.
    const masked = keepOut ? keepOut.json(json) : json;
    if (masked !== json) {
      json = masked;
      // Ids too (a forwarded answer's are the upstream's): kept under what the caller got, and never logged with the key.
      id = keepOut!.text(id);
      ownItemIds = ownItemIds.map((item) => keepOut!.text(item));
    }
    const problem = responseIdProblem(id);
    if (problem) {
      this.log.warn({ responseId: id.slice(0, 64), reason: problem }, 'response not stored: its id cannot be a response id');
      return Promise.resolve();
    }
    const size = Buffer.byteLength(json);
    if (size > this.options.maxBytes) {
      this.log.warn({ responseId: id, sizeBytes: size, maxBytes: this.options.maxBytes }, 'response not stored: its conversation exceeds responsesState.maxBytes');
      return Promise.resolve();
    }
    const write = this.write(owner, id, json, size, ownItemIds).catch((err: unknown) => {
      this.log.warn({ responseId: id, err: err instanceof Error ? err.message : String(err) }, 'response could not be stored');
    });
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
    return write;
  }

  private async write(owner: string, id: string, json: string, size: number, ownItemIds: string[]): Promise<void> {
    // Sealing runs here, once the answer is complete, not while it streams.
    const payload = this.sealer.enabled ? this.sealer.seal(json) : PLAIN + json;
    // One statement, so one round trip: a response id already kept (a forwarded answer whose
    // upstream repeated an id) keeps its first owner and content, and then adds no items.
    const res = await this.db.query<{ kept: number }>(
      `WITH kept AS (
         INSERT INTO responses_state (id, owner, payload, size_bytes, expires_at) VALUES ($1, $2, $3, $4, now() + make_interval(hours => $5))
         ON CONFLICT (id) DO NOTHING RETURNING id
       ), items AS (
         INSERT INTO responses_state_items (item_id, owner, response_id) SELECT unnest($6::text[]), $2, kept.id FROM kept ON CONFLICT DO NOTHING
       )
       SELECT count(*)::int AS kept FROM kept`,
      [id, owner, payload, size, this.options.retentionHours, ownItemIds.map(itemKey)],
    );
    if (res.rows[0]?.kept !== 1) this.log.warn({ responseId: id }, 'response not stored: a response with its id is already kept (the upstream repeated an id)');
  }

  claimForwarded(owner: string, ids: string[]): void {
    if (this.options.enabled) this.owners.claim(owner, ids);
  }

  foreignForwarded(owner: string, ids: string[]): Promise<string | null> {
    return this.options.enabled && ids.length > 0 ? this.owners.foreign(owner, ids) : Promise.resolve(null);
  }

  /** Resolves once every write started so far has finished (shutdown, and a lookup that missed). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending, this.owners.flush()]);
  }

  async get(owner: string, id: string): Promise<StoredResponse | null> {
    // Never stored, so unknown (a query would fail on a NUL byte).
    if (responseIdProblem(id)) return null;
    return this.readMissAware(() => this.read(owner, id));
  }

  async findItem(owner: string, itemId: string): Promise<Record<string, unknown> | null> {
    return this.readMissAware(async () => {
      const row = await this.query<{ response_id: string }>('SELECT response_id FROM responses_state_items WHERE owner = $1 AND item_id = $2', [owner, itemKey(itemId)]);
      if (!row) return null;
      const stored = await this.read(owner, row.response_id);
      if (!stored) return null;
      const output = Array.isArray(stored.response.output) ? stored.response.output as Record<string, unknown>[] : [];
      return [...stored.items, ...output].find((item) => item.id === itemId) ?? null;
    });
  }

  async delete(owner: string, id: string): Promise<boolean> {
    if (responseIdProblem(id)) return false;
    if (this.pending.size > 0) await this.flush();
    try {
      const res = await this.db.query<{ id: string }>('DELETE FROM responses_state WHERE id = $1 AND owner = $2 AND expires_at > now() RETURNING id', [id, owner]);
      return res.rows.length > 0;
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Deletes expired rows (their items go with them), and expired records of passed-through answers' owners. */
  async sweep(): Promise<number> {
    try {
      const res = await this.db.query<{ id: string }>('DELETE FROM responses_state WHERE expires_at <= now() RETURNING id');
      return res.rows.length + await this.owners.sweep();
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'expired stored responses could not be deleted');
      return 0;
    }
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.flush();
  }

  /** A miss while writes are pending waits for them and looks again: the follow-up right after an answer. */
  private async readMissAware<T>(read: () => Promise<T | null>): Promise<T | null> {
    // Taken before the read: a write that commits while the read runs is waited for as well.
    const inFlight = [...this.pending];
    const first = await read();
    if (first !== null || inFlight.length === 0) return first;
    await Promise.allSettled(inFlight);
    return read();
  }

  private async read(owner: string, id: string): Promise<StoredResponse | null> {
    const row = await this.query<{ payload: string }>('SELECT payload FROM responses_state WHERE id = $1 AND owner = $2 AND expires_at > now()', [id, owner]);
    if (!row) return null;
    try {
      const json = row.payload.startsWith(PLAIN) ? row.payload.slice(PLAIN.length) : this.sealer.open(row.payload);
      return JSON.parse(json) as StoredResponse;
    } catch (err) {
      // Sealed under a master key no longer configured: as gone as an expired one.
      this.log.warn({ responseId: id, err: err instanceof Error ? err.message : String(err) }, 'stored response could not be opened');
      return null;
    }
  }

  private async query<T>(sql: string, params: unknown[]): Promise<T | null> {
    try {
      return (await this.db.query<T>(sql, params)).rows[0] ?? null;
    } catch (err) {
      throw unavailable(err);
    }
  }
}

/** The database's own message stays in the log (it may name hosts); the client gets a 503. */
function unavailable(err: unknown): RelayError {
  return new RelayError('RELAY_ERR_DATABASE_UNAVAILABLE', 'Stored responses cannot be read: the database did not answer.', { cause: err });
}
