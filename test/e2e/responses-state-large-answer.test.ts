// A Responses answer passed through for a model that may fail over to another vendor is copied
// for Relay's Responses state (forwarded-capture.ts), but never past the store's own cap
// (responsesState.maxBytes): an answer over it reaches the client whole, is not kept, and the
// log says so, once; an answer under it is kept as before.
import t from 'tap';
import OpenAI from 'openai';
import { eventually, startRelay, seedRoute } from '../../core/testing.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const MAX_BYTES = 16 * 1024;
const lines: string[] = [];
const relay = await startRelay({ config: { responsesState: { maxBytes: MAX_BYTES } }, logLevel: 'warn', logStream: { write: (line) => lines.push(line) } });
const openaiUp = await startFakeUpstream({ text: 'short' });
const anthropicUp = await startFakeUpstream({ text: 'Claude' });
// The model may fail over to Anthropic (so OpenAI's answers are copied), but every answer here is OpenAI's.
anthropicUp.script(() => faults.serverError({ vendor: 'anthropic' }));
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'cap-model', policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'cap-model', policy: { modelIds: '*' } });
await settled(relay, (s) => [gpt, claude].every((r) => s.relayKeys.has(r.relayKeyId)) && s.modelBySlug('cap-model')?.spec.bindings.length === 2);
const client = new OpenAI({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });

const stored = async (id: string) => (await relay.relay.db.query('SELECT 1 FROM responses_state WHERE id = $1', [id])).rows.length === 1;
const warnings = () => lines.filter((l) => /the answer alone exceeds responsesState\.maxBytes/.test(l));

t.test('an answer under the cap is kept', async (t) => {
  openaiUp.configure({ text: 'short' });
  const answer = await client.responses.create({ model: 'cap-model', input: 'Hi.' });
  t.equal(answer.output_text, 'short');
  await eventually(() => stored(answer.id), 5_000, 20);
  t.ok(await stored(answer.id), 'kept');
});

for (const stream of [false, true]) {
  t.test(`an answer over the cap (${stream ? 'streamed' : 'not streamed'}) reaches the client whole, is not kept, and is logged once`, async (t) => {
    const text = `${stream ? 'S' : 'N'}${'x'.repeat(2 * MAX_BYTES)}`;
    openaiUp.configure({ text });
    const before = warnings().length;
    let id = '';
    if (stream) {
      const events = await client.responses.create({ model: 'cap-model', input: 'Long, please.', stream: true });
      let got = '';
      for await (const event of events) {
        if (event.type === 'response.output_text.delta') got += event.delta;
        if (event.type === 'response.completed') id = event.response.id;
      }
      t.equal(got, text, 'the whole text');
    } else {
      const answer = await client.responses.create({ model: 'cap-model', input: 'Long, please.' });
      t.equal(answer.output_text, text, 'the whole text');
      id = answer.id;
    }
    t.ok(id);
    t.notOk(await stored(id), 'not kept');
    t.equal(warnings().length - before, 1, 'one warning');
    t.notMatch(warnings().at(-1)!, /xxxx/, 'the warning quotes no content');
  });
}
