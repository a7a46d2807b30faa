// The OpenAPI description the translation tests validate against is vendored in the repository
// (with its license), so that a fresh clone passes without files from outside it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/package-root.ts';
import { OPENAI_OPENAPI_PATH, openapiProblems } from '../support/openapi-schemas.ts';

t.test('the OpenAPI description is read from inside the repository, with its license beside it', async (t) => {
  const relative = path.relative(PACKAGE_ROOT, OPENAI_OPENAPI_PATH);
  t.notOk(relative.startsWith('..') || path.isAbsolute(relative), `${OPENAI_OPENAPI_PATH} is inside ${PACKAGE_ROOT}`);
  t.ok(existsSync(OPENAI_OPENAPI_PATH), 'the description is there');
  const license = readFileSync(path.join(path.dirname(OPENAI_OPENAPI_PATH), 'LICENSE'), 'utf8');
  t.match(license, /MIT License/);
  t.match(license, /OpenAI/);
});

t.test('the vendored description validates a chat completion', async (t) => {
  t.same(openapiProblems('CreateChatCompletionResponse', {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content: 'hi', refusal: null } }],
  }), []);
  t.not(openapiProblems('CreateChatCompletionResponse', { id: 1 }).length, 0, 'a wrong body is refused');
});
