// holdsEnvelope: whether a passthrough body holds one of Relay's sealed envelopes (`relay1.`),
// found through the rarer `y1.` and the four bytes before it.
import t from 'tap';
import { holdsEnvelope } from '../../core/canonical/envelope-mark.ts';

t.test('the mark anywhere, in bytes or text', async (t) => {
  for (const text of ['relay1.abc', '{"signature":"relay1.eyJvIjoi"}', `${'x'.repeat(70_000)}"srvtoolu_relay1.a"`, '{"id":"ws_relay1.X"}']) {
    t.ok(holdsEnvelope(Buffer.from(text)), text.slice(-30));
    t.ok(holdsEnvelope(text), `${text.slice(-30)} as a string`);
  }
});

t.test('near misses are not the mark', async (t) => {
  for (const text of ['', 'y1.', 'day1. relay 1.', 'relay1', 'Relay1.', 'rel_y1.', 'xelay1.', '{"text":"monday1. relax1."}']) {
    t.notOk(holdsEnvelope(Buffer.from(text)), JSON.stringify(text));
    t.notOk(holdsEnvelope(text), `${JSON.stringify(text)} as a string`);
  }
});
