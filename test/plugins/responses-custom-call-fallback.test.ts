// The Responses encoder's safety net: a call for a tool the client declared custom that arrives
// as a function call (an adapter without the unwrap rule) reaches the client as a custom call with
// its raw input text, and with '' when it carries no input, as every adapter gives it.
import t from 'tap';
import { clientToolCall } from '../../plugins/wire-vendor-a/codec/custom-tool-calls.ts';

const custom = new Set(['apply_patch']);

t.test('a custom tool called as a function: unwrapped to its input text', async (t) => {
  t.same(clientToolCall({ name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' }, custom), { kind: 'custom', input: '*** Begin Patch' });
  t.same(clientToolCall({ name: 'apply_patch', arguments: 'raw text' }, custom), { kind: 'custom', input: 'raw text' }, 'not JSON: the text as it is');
});

t.test('no input: the empty text, not "{}"', async (t) => {
  for (const args of ['{}', 'null', '']) {
    t.same(clientToolCall({ name: 'apply_patch', arguments: args }, custom), { kind: 'custom', input: '' }, JSON.stringify(args));
  }
});

t.test('a function tool stays a function call with its arguments', async (t) => {
  t.same(clientToolCall({ name: 'read_file', arguments: '{}' }, custom).kind, 'function');
});
