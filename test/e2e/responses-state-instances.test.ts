// Relay's Responses state across instances (issue 44): two Relays share one Postgres database; a
// follow-up with previous_response_id sent to the second as soon as the first's answer is complete
// finds the first turn, streamed or not, because the state is written before the answer's last
// byte. The Anthropic upstream records what it receives; nothing waits between the two calls.
import t from 'tap';
import { createTestDatabase, seedRoute, startRelay } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { anthropic, startFakeUpstream, type RecordedRequest } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

type Json = Record<string, any>;
const db = await createTestDatabase();
const masterKey = generateMasterKey();
const first = await startRelay({ database: db.url, masterKey });
const second = await startRelay({ database: db.url, masterKey });
const up = await startFakeUpstream();
t.teardown(async () => {
  await first.close();
  await second.close();
  await up.close();
  await db.drop();
});

let turn = 0;
up.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const body = { model: j.model, chunks: 3, text: `answer ${++turn}` };
  return j.stream ? { headers: { 'content-type': 'text/event-stream' }, frames: anthropic.events(body) } : { body: anthropic.message(body) };
});

const claude = await seedRoute(first, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'shared-claude' });
for (const relay of [first, second]) await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.hostKeysOfHost(claude.hostId).length > 0);

/** A Responses call, its body read to the last byte; a streamed one's id from its response.completed frame. */
async function respond(relay: typeof first, body: Json): Promise<{ status: number; id: string | null; text: string }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` }, body: JSON.stringify({ model: 'shared-claude', ...body }),
  });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, id: null, text };
  if (!body.stream) return { status: 200, id: (JSON.parse(text) as Json).id, text };
  const completed = text.split('\n').find((line) => line.startsWith('data: ') && line.includes('"response.completed"'));
  return { status: 200, id: completed ? (JSON.parse(completed.slice(6)) as Json).response.id : null, text };
}

const userTexts = (): string[] => ((up.lastRequest()!.json as Json).messages as Json[])
  .map((m) => (typeof m.content === 'string' ? m.content : (m.content as Json[]).map((b) => b.text).join('')));

for (const stream of [false, true]) {
  t.test(`a follow-up on the other instance, right after the answer${stream ? ' (streamed)' : ''}, continues the conversation`, async (t) => {
    for (let i = 0; i < 10; i++) {
      const opening = await respond(first, { stream, input: `My number is ${i}.` });
      t.equal(opening.status, 200);
      t.ok(opening.id, 'the first answer has an id');
      const answer = `answer ${turn}`;
      const followUp = await respond(second, { stream, previous_response_id: opening.id, input: 'Which number?' });
      t.equal(followUp.status, 200, `round ${i}: found on the other instance (${followUp.text.slice(0, 120)})`);
      t.same(userTexts(), [`My number is ${i}.`, answer, 'Which number?'], `round ${i}: the upstream saw the first turn`);
    }
  });
}
