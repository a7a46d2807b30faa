// The passthrough tap's estimate of a stream's output (output-frames.ts): every frame counted, a
// sample spread over the whole answer parsed, Chat's [DONE] and Responses' `.done` repeats left out.
import t from 'tap';
import { OutputFrames } from '../../core/pipeline/output-frames.ts';
import { generatedChars } from '../../core/canonical/output-token-estimate.ts';

const chat = (content: string) => JSON.stringify({ id: 'chatcmpl-1', model: 'gpt-4o', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

t.test('short answers are read whole; long ones from a sample spread over them', async (t) => {
  const few = new OutputFrames();
  for (const piece of ['Hel', 'lo', ' there']) few.add(undefined, chat(piece));
  t.equal(few.chars(), 'Hello there'.length, 'every frame parsed');

  // 1,000 frames whose text grows from 1 to 10 characters: a sample of the last frames only would say 10 a frame.
  const many = new OutputFrames();
  let total = 0;
  for (let i = 0; i < 1_000; i++) {
    const text = 'x'.repeat(1 + Math.floor(i / 100));
    total += text.length;
    many.add(undefined, chat(text));
  }
  t.ok(Math.abs(many.chars() - total) / total < 0.1, `${many.chars()} for ${total} characters`);
});

t.test('[DONE] and the `.done` events that repeat a Responses answer\'s text are not output', async (t) => {
  const frames = new OutputFrames();
  frames.add('response.output_text.delta', JSON.stringify({ type: 'response.output_text.delta', delta: 'Hello' }));
  frames.add('response.output_text.done', JSON.stringify({ type: 'response.output_text.done', text: 'Hello' }));
  frames.add(undefined, '[DONE]');
  t.equal(frames.chars(), 5);
  t.equal(new OutputFrames().chars(), 0, 'no frames, nothing');
});

t.test('generatedChars reads what the model wrote, not ids, names or types, in each vendor\'s frames', async (t) => {
  t.equal(generatedChars({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'abc' } }), 3, 'Anthropic');
  t.equal(generatedChars({ type: 'content_block_delta', delta: { type: 'input_json_delta', partial_json: '{"a":' } }), 5, 'Anthropic tool input');
  t.equal(generatedChars({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'shell', arguments: '{"x":1}' } }] } }] }), 7, 'Chat tool arguments');
  t.equal(generatedChars({ candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }, { functionCall: { name: 'f', args: { a: 1 } } }] } }] }), 2 + '{"a":1}'.length, 'Gemini');
});
