// RouteCall, an inference request as the pipeline gets it: members read from the body's bytes.
import t from 'tap';
import { RouteCall } from '../../core/http/inference-route.ts';
import { readInferenceBody } from '../../core/http/inference-body.ts';

const call = (text: string) => {
  const body = Buffer.from(text);
  return new RouteCall('openai.responses', 'openai.responses', body, readInferenceBody(body), false, undefined, undefined);
};

t.test('memberBytes: a read member\'s value as sent, a view of the body', async (t) => {
  const c = call('{"model":"m","tools": [ {"type":"code_interpreter","\\u0063ontainer":"cntr_1"} ] ,"input":"hi"}');
  const tools = c.memberBytes('tools')!;
  t.equal(tools.toString(), '[ {"type":"code_interpreter","\\u0063ontainer":"cntr_1"} ]', 'escapes and spaces kept');
  t.equal(tools.buffer, c.body.buffer, 'not a copy');
  t.equal(c.memberBytes('container'), undefined, 'absent');
  t.equal(c.memberBytes('instructions'), undefined, 'absent, not read from the bytes');
  t.same(c.member('tools'), [{ type: 'code_interpreter', container: 'cntr_1' }]);
});

t.test('memberBytes of a member Relay does not read: its JSON, from the parsed body', async (t) => {
  const c = call('{"model":"m","metadata":{ "a" : "\\u0062" }}');
  t.equal(c.memberBytes('metadata')!.toString(), '{"a":"b"}');
});
