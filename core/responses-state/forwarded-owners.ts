// The ownership ledger of what passed-through answers made upstream under the host's shared key
// (OpenAI responses, output items and code containers; Anthropic code containers): Relay records
// whose each id is and refuses another owner's reference. Written after the answer's last byte, off
// the hot path; expires with the state. Ids of every kind share one table: vendors' prefixes keep
// them apart, and a request naming several kinds is checked in one query.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';
import { RelayError } from '../errors.ts';
import { indexedItemId } from './ids.ts';

export class ForwardedOwners {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly db: Database, private readonly log: Logger, private readonly retentionHours: number) {}

  /**
   * Records the ids as the owner's, in the background. An id recorded under another owner keeps it
   * until its record expires; its owner's later answer naming it again (a container in use) renews it.
   */
  claim(owner: string, ids: string[]): void {
    if (ids.length === 0) return;
    const write = this.db.query(
      `INSERT INTO responses_forwarded_owners AS o (id, owner, expires_at)
       SELECT DISTINCT unnest($1::text[]), $2, now() + make_interval(hours => $3)
       ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
       WHERE o.owner = EXCLUDED.owner OR o.expires_at <= now()`,
      [ids.map(indexedItemId), owner, this.retentionHours],
    ).then(() => undefined, (err: unknown) => {
      // The answer went out already; a reference to it is then forwarded unchecked, as before the ledger.
      // The ids are left out: until recorded, whoever holds one can name it.
      this.log.warn({ ids: ids.length, err: err instanceof Error ? err.message : String(err) }, 'passed-through answer\'s owner could not be recorded');
    });
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** The first of `ids` recorded under another owner, or null; one query. */
  async foreign(owner: string, ids: string[]): Promise<string | null> {
    // A reference sent right after an answer on this instance waits for that answer's record.
    if (this.pending.size > 0) await this.flush();
    const keys = ids.map(indexedItemId);
    let rows: Array<{ id: string; owner: string }>;
    try {
      rows = (await this.db.query<{ id: string; owner: string }>(
        'SELECT id, owner FROM responses_forwarded_owners WHERE id = ANY($1::text[]) AND expires_at > now()', [keys],
      )).rows;
    } catch (err) {
      // Refused rather than forwarded unchecked: the check is what keeps owners apart.
      throw new RelayError('RELAY_ERR_DATABASE_UNAVAILABLE', 'What the request names (a response, item, container or file) cannot be checked against its owner: the database did not answer.', { cause: err });
    }
    const others = new Set(rows.filter((r) => r.owner !== owner).map((r) => r.id));
    return ids.find((_id, i) => others.has(keys[i]!)) ?? null;
  }

  /** Deletes expired rows. */
  async sweep(): Promise<number> {
    const res = await this.db.query<{ id: string }>('DELETE FROM responses_forwarded_owners WHERE expires_at <= now() RETURNING id');
    return res.rows.length;
  }

  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}
