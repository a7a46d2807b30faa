// Relay's Responses state store (core/responses-state/store.ts) on embedded PGlite: owners, the
// pending-write race, sealing, the size cap, retention, and a payload whose master key is gone.
import t from 'tap';
import pino from 'pino';
import { PgliteDatabase } from '../../core/db/pglite.ts';
import { migrate } from '../../core/db/migrate.ts';
import { Sealer, generateMasterKey, parseMasterKey } from '../../core/crypto/sealing.ts';
import { ResponsesStateStore } from '../../core/responses-state/store.ts';
import type { StoredResponse } from '../../core/responses-state/types.ts';

const db = await PgliteDatabase.open(null);
await migrate(db);
const warnings: string[] = [];
const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
const sealer = new Sealer(parseMasterKey(generateMasterKey()));
const options = { enabled: true, retentionHours: 24, maxBytes: 4096, scope: 'relay-key' as const, keepForwarded: true };
const store = new ResponsesStateStore(db, sealer, log, options);
t.teardown(async () => { await store.close(); await db.close(); });

const stored = (text: string): StoredResponse => ({
  response: { id: `resp_${text}`, object: 'response', output: [{ id: `msg_${text}_0`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] },
  items: [{ id: `msg_${text}_in0`, type: 'message', role: 'user', content: 'question' }],
  inputFrom: 0,
});

t.test('a lookup right after save finds the response (the write is waited for), sealed at rest', async (t) => {
  store.save('key:a', 'resp_one', stored('one'), ['msg_one_in0', 'msg_one_0'], null);
  const got = await store.get('key:a', 'resp_one');
  t.same(got, stored('one'));
  const row = (await db.query<{ payload: string }>('SELECT payload FROM responses_state WHERE id = $1', ['resp_one'])).rows[0];
  t.match(row.payload, /^v1\./);
  t.notMatch(row.payload, /question/);
  store.save('key:a', 'resp_two', stored('two'), ['msg_two_0'], null);
  t.same(await store.findItem('key:a', 'msg_two_0'), (stored('two').response.output as unknown[])[0], 'an output item, right after save');
});

t.test('another owner sees nothing and deletes nothing', async (t) => {
  t.equal(await store.get('key:b', 'resp_one'), null);
  t.equal(await store.findItem('key:b', 'msg_one_0'), null);
  t.equal(await store.delete('key:b', 'resp_one'), false);
  t.ok(await store.get('key:a', 'resp_one'));
  t.equal(await store.delete('key:a', 'resp_one'), true);
  t.equal(await store.get('key:a', 'resp_one'), null);
  t.equal(await store.findItem('key:a', 'msg_one_in0'), null, 'its items went with it');
});

t.test('a repeated id keeps its first owner and content', async (t) => {
  store.save('key:a', 'resp_same', stored('first'), [], null);
  store.save('key:b', 'resp_same', stored('second'), [], null);
  await store.flush();
  t.same((await store.get('key:a', 'resp_same'))?.response.id, 'resp_first');
  t.equal(await store.get('key:b', 'resp_same'), null);
  t.match(warnings.map((line) => JSON.parse(line)), [{ responseId: 'resp_same', msg: /already kept/ }], 'and the one not stored is logged');
});

t.test('an item id that carries conversation content (another vendor\'s search) is indexed by its hash, long or short', async (t) => {
  const short = `ws_relay1.${Buffer.from('{"o":"anthropic","r":{"query":"salary of my boss"}}').toString('base64url')}`;
  const long = `ws_relay1.${'A'.repeat(600)}`;
  const search = (id: string) => ({ id, type: 'web_search_call', status: 'completed', action: { type: 'search' } });
  store.save('key:a', 'resp_ws', { ...stored('ws'), response: { id: 'resp_ws', object: 'response', output: [search(short), search(long)] } }, [short, long], null);
  await store.flush();
  t.same(await store.findItem('key:a', short), search(short), 'found by its id');
  t.same(await store.findItem('key:a', long), search(long));
  const ids = (await db.query<{ item_id: string }>('SELECT item_id FROM responses_state_items WHERE response_id = $1', ['resp_ws'])).rows.map((r) => r.item_id);
  t.equal(ids.length, 2);
  t.ok(ids.every((id) => id.startsWith('sha256:') && !id.includes('relay1.')), `stored as hashes (${ids.map((id) => id.slice(0, 20)).join(', ')})`);
});

t.test('a conversation over maxBytes is not kept', async (t) => {
  const big = stored('big');
  big.items[0].content = 'x'.repeat(5000);
  store.save('key:a', 'resp_big', big, [], null);
  await store.flush();
  t.equal(await store.get('key:a', 'resp_big'), null);
});

t.test('expired responses are invisible, then swept', async (t) => {
  store.save('key:a', 'resp_old', stored('old'), ['msg_old_0'], null);
  await store.flush();
  await db.query("UPDATE responses_state SET expires_at = now() - interval '1 second' WHERE id = 'resp_old'");
  t.equal(await store.get('key:a', 'resp_old'), null);
  t.equal(await store.findItem('key:a', 'msg_old_0'), null);
  t.ok(await store.sweep() >= 1);
  t.equal((await db.query('SELECT 1 FROM responses_state WHERE id = $1', ['resp_old'])).rows.length, 0);
});

t.test('scope policy: every key of the policy shares; a payload sealed under a lost key reads as gone', async (t) => {
  const byPolicy = new ResponsesStateStore(db, sealer, log, { ...options, scope: 'policy' });
  t.equal(byPolicy.ownerOf({ relayKey: { metadata: { id: 'k1' } }, policy: { metadata: { id: 'p1' } } } as never), 'policy:p1');
  t.equal(store.ownerOf({ relayKey: { metadata: { id: 'k1' } }, policy: { metadata: { id: 'p1' } } } as never), 'key:k1');
  await byPolicy.close();
  const otherKey = new ResponsesStateStore(db, new Sealer(parseMasterKey(generateMasterKey())), log, options);
  t.ok(await store.get('key:a', 'resp_two'));
  t.equal(await otherKey.get('key:a', 'resp_two'), null, 'no master key opens it: as if expired, no 500');
  await otherKey.close();
});

t.test('without a master key the payload is kept unsealed (a startup warning says so)', async (t) => {
  const plain = new ResponsesStateStore(db, new Sealer(null), log, options);
  plain.save('key:c', 'resp_plain', stored('plain'), [], null);
  t.same(await plain.get('key:c', 'resp_plain'), stored('plain'));
  await plain.close();
});

t.test('passed-through answers\' owners: recorded, looked up in one query, expired with the state', async (t) => {
  const long = `msg_${'x'.repeat(400)}`;
  store.claimForwarded('key:a', ['resp_fwd', 'msg_fwd_0', 'msg_nul\u0000', long]);
  // A lookup right after the claim waits for its write (no sleep).
  t.equal(await store.foreignForwarded('key:a', ['resp_fwd', 'msg_fwd_0', long]), null, 'its owner names them freely');
  t.equal(await store.foreignForwarded('key:b', ['resp_unknown', 'msg_fwd_0']), 'msg_fwd_0', 'another owner: the first it may not name');
  t.equal(await store.foreignForwarded('key:b', ['msg_nul\u0000']), 'msg_nul\u0000', 'an id holding NUL is kept by its hash, never sent as text');
  t.equal(await store.foreignForwarded('key:b', [long]), long, 'a long one too');
  t.equal(await store.foreignForwarded('key:b', ['resp_unknown']), null, 'never recorded: forwarded');
  store.claimForwarded('key:b', ['resp_fwd']);
  await store.flush();
  t.equal(await store.foreignForwarded('key:a', ['resp_fwd']), null, 'an id already recorded keeps its first owner');

  await db.query("UPDATE responses_forwarded_owners SET expires_at = now() - interval '1 second' WHERE id = 'resp_fwd'");
  t.equal(await store.foreignForwarded('key:b', ['resp_fwd']), null, 'expired: as unrecorded');
  t.ok(await store.sweep() >= 1);
  t.equal((await db.query('SELECT 1 FROM responses_forwarded_owners WHERE id = $1', ['resp_fwd'])).rows.length, 0, 'swept');

  const off = new ResponsesStateStore(db, sealer, log, { ...options, enabled: false });
  off.claimForwarded('key:a', ['resp_off']);
  t.equal(await off.foreignForwarded('key:b', ['msg_fwd_0']), null, 'state off: nothing recorded, nothing refused');
  t.equal((await db.query('SELECT 1 FROM responses_forwarded_owners WHERE id = $1', ['resp_off'])).rows.length, 0);
});

t.test('a container named again by its owner\'s answers keeps its record; an expired one goes to the next owner', async (t) => {
  const expiresAt = async (id: string) => (await db.query<{ expires_at: Date; owner: string }>('SELECT expires_at, owner FROM responses_forwarded_owners WHERE id = $1', [id])).rows[0]!;
  store.claimForwarded('key:a', ['cntr_in_use']);
  await store.flush();
  await db.query("UPDATE responses_forwarded_owners SET expires_at = now() + interval '1 minute' WHERE id = 'cntr_in_use'");
  store.claimForwarded('key:a', ['cntr_in_use']);
  await store.flush();
  t.ok((await expiresAt('cntr_in_use')).expires_at.getTime() > Date.now() + 23 * 3600_000, 'the owner\'s later answer renews it for retentionHours');
  store.claimForwarded('key:b', ['cntr_in_use']);
  await store.flush();
  t.equal((await expiresAt('cntr_in_use')).owner, 'key:a', 'another owner\'s answer naming it changes nothing');
  t.equal(await store.foreignForwarded('key:b', ['cntr_in_use']), 'cntr_in_use');

  await db.query("UPDATE responses_forwarded_owners SET expires_at = now() - interval '1 second' WHERE id = 'cntr_in_use'");
  store.claimForwarded('key:b', ['cntr_in_use']);
  await store.flush();
  t.equal((await expiresAt('cntr_in_use')).owner, 'key:b', 'expired, not yet swept: recorded for the next owner, as after the sweep');
  t.equal(await store.foreignForwarded('key:a', ['cntr_in_use']), 'cntr_in_use');
});
