// wire-vendor-b's file ids: where a request names one (any `file_id` string under `messages`, with
// its pointer), and which files a code execution result says its code wrote.
import t from 'tap';
import { fileIdsIn, writtenFiles } from '../../plugins/wire-vendor-b/codec/file-ids.ts';
import { holdsContainerObject } from '../../plugins/wire-vendor-b/codec/forwarded-answer-ids.ts';

t.test('every file_id string under messages, with its pointer', async (t) => {
  const messages = [
    { role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_a' } }, { type: 'container_upload', file_id: 'file_b' }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: [{ type: 'image', source: { type: 'file', file_id: 'file_c' } }] }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'y', name: 'n', input: { 'a/b': { file_id: 'file_d' }, file_id: { not: 'a string' } } }] },
  ];
  t.same(fileIdsIn(messages, '/messages').sort((x, y) => x.id.localeCompare(y.id)), [
    { id: 'file_a', field: '/messages/0/content/0/source/file_id' },
    { id: 'file_b', field: '/messages/0/content/1/file_id' },
    { id: 'file_c', field: '/messages/1/content/0/content/0/source/file_id' },
    { id: 'file_d', field: '/messages/2/content/0/input/a~1b/file_id' },
  ]);
  t.same(fileIdsIn('just text', '/messages'), []);
});

t.test('a body nested far deeper than the call stack allows is walked', async (t) => {
  let deep: unknown = { file_id: 'file_deep' };
  for (let i = 0; i < 200_000; i++) deep = [deep];
  t.equal(fileIdsIn(deep, '')[0]!.id, 'file_deep');
});

t.test('the files a code execution result wrote', async (t) => {
  const result = (type: string) => ({ type, tool_use_id: 'srvtoolu_1', content: { type: 'x_result', stdout: '', content: [{ type: 'bash_code_execution_output', file_id: 'file_out' }, { type: 'other' }] } });
  t.same(writtenFiles(result('bash_code_execution_tool_result')), ['file_out']);
  t.same(writtenFiles(result('code_execution_tool_result')), ['file_out']);
  t.same(writtenFiles(result('web_search_tool_result')), [], 'another block');
  t.same(writtenFiles({ type: 'bash_code_execution_tool_result', content: { type: 'bash_code_execution_tool_result_error', error_code: 'unavailable' } }), []);
});

t.test('an answer is parsed for its container only when "container" holds an object', async (t) => {
  t.ok(holdsContainerObject(Buffer.from('{"container": {"id":"container_1"}}')));
  t.ok(holdsContainerObject(Buffer.from('{"content":[{"text":"\\"container\\""}],"container":\n{"id":"c"}}')));
  t.notOk(holdsContainerObject(Buffer.from('{"container":null,"content":[]}')));
  t.notOk(holdsContainerObject(Buffer.from('{"content":[{"type":"text","text":"a docker container"}]}')));
  t.notOk(holdsContainerObject(Buffer.from('{"container"')), 'cut short');
});
