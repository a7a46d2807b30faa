// toolArgumentsText (relay-gateway/canonical): a tool call's input as canonical arguments text,
// shared by the Bedrock and OpenAI answer decoders, each naming what it cannot read in its terms.
import t from 'tap';
import { toolArgumentsText } from '../../core/plugin-api/canonical.ts';

t.test('text as it is, an object or array as its JSON, null or absent as nothing', async (t) => {
  const dropped: string[] = [];
  t.equal(toolArgumentsText('{"q":"x"}', dropped, 'toolUse.input'), '{"q":"x"}', 'never encoded again');
  t.equal(toolArgumentsText('*** Begin Patch', dropped, 'toolUse.input'), '*** Begin Patch');
  t.equal(toolArgumentsText({ q: 'x' }, dropped, 'toolUse.input'), '{"q":"x"}');
  t.equal(toolArgumentsText(['a'], dropped, 'toolUse.input'), '["a"]');
  t.equal(toolArgumentsText(undefined, dropped, 'toolUse.input'), '');
  t.equal(toolArgumentsText(null, dropped, 'toolUse.input'), '');
  t.same(dropped, [], 'nothing named');
});

t.test('any other value is read as nothing and named once, by the name the caller gives', async (t) => {
  const dropped: string[] = [];
  t.equal(toolArgumentsText(42, dropped, 'tool_call.arguments'), '');
  t.equal(toolArgumentsText(true, dropped, 'tool_call.arguments'), '');
  t.equal(toolArgumentsText(0, dropped, 'toolUse.input'), '');
  t.same(dropped, ['tool_call.arguments', 'toolUse.input']);
});
