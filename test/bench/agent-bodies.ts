// Request bodies the size and make of a coding agent's turn, as CLIENTS.md describes them: a
// Responses body as Codex sends it (model first, ~38 KB of function tools, instructions as a
// developer message, input items carrying ids, function calls and their outputs) and a Messages
// body as Claude Code sends it (system blocks with cache_control, 24 tools, tool_use and
// tool_result blocks, `stream` last). Each grows its conversation until it reaches the bytes asked
// for: a first turn is tens of KB, a turn deep into a session several hundred.

/** Source-file-like text: what tool results and file reads mostly carry. */
function fileText(seed: number, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    out.push(`  const value${seed}_${i} = compute("item-${i}", { retries: ${i % 5}, label: "naïve café ${seed}" }); // line ${i}`);
  }
  return `// src/module${seed}.ts\nexport function run${seed}() {\n${out.join('\n')}\n}\n`;
}

function jsonSchemaTool(i: number): { name: string; description: string; schema: object } {
  return {
    name: `tool_${i}`,
    description: `Tool number ${i}. Reads or changes files in the workspace; see the parameters for what each field does. `.repeat(6),
    schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Absolute path of the file to work on.' },
        content: { type: 'string', description: 'The new content, when writing.' },
        offset: { type: 'integer', minimum: 0, description: 'First line to read.' },
        limit: { type: 'integer', minimum: 1, maximum: 2000, description: 'Lines to read at most.' },
        mode: { type: 'string', enum: ['read', 'write', 'append'] },
      },
      required: ['path'],
      additionalProperties: false,
    },
  };
}

/** A Codex Responses request of about `bytes` bytes. */
export function codexBody(bytes: number, model = 'gpt-5-codex'): Buffer {
  const tools = Array.from({ length: 16 }, (_, i) => {
    const t = jsonSchemaTool(i);
    return { type: 'function', name: t.name, description: t.description, strict: true, parameters: t.schema };
  });
  const input: object[] = [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent running in a terminal. '.repeat(200) }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test in src/module0.ts and explain the change.' }] },
  ];
  const body = {
    model, stream: true, tool_choice: 'auto', parallel_tool_calls: false, reasoning: { effort: 'medium', summary: 'auto' }, store: false,
    include: ['reasoning.encrypted_content'], prompt_cache_key: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', text: { verbosity: 'medium' }, tools, input,
  };
  for (let turn = 0; Buffer.byteLength(JSON.stringify(body)) < bytes; turn++) {
    input.push({ type: 'reasoning', id: `rs_${turn}`, summary: [], encrypted_content: 'gAAAAA' + 'x9Yz'.repeat(300) });
    input.push({ type: 'function_call', id: `fc_${turn}`, call_id: `call_${turn}`, name: 'shell', arguments: JSON.stringify({ command: ['cat', `src/module${turn}.ts`] }) });
    input.push({ type: 'function_call_output', call_id: `call_${turn}`, output: fileText(turn, 60) });
  }
  return Buffer.from(JSON.stringify(body));
}

/** A Claude Code Messages request of about `bytes` bytes. */
export function claudeCodeBody(bytes: number, model = 'claude-sonnet-4-5'): Buffer {
  const tools = Array.from({ length: 24 }, (_, i) => {
    const t = jsonSchemaTool(i);
    return { name: t.name, description: t.description, input_schema: t.schema };
  });
  const messages: object[] = [{ role: 'user', content: [{ type: 'text', text: 'Fix the failing test in src/module0.ts and explain the change.' }] }];
  const body = {
    model, messages,
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks. '.repeat(150), cache_control: { type: 'ephemeral' } },
    ],
    tools,
    metadata: { user_id: JSON.stringify({ device_id: 'a'.repeat(64), account_uuid: '', session_id: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }) },
    max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 31999 }, stream: true,
  };
  for (let turn = 0; Buffer.byteLength(JSON.stringify(body)) < bytes; turn++) {
    messages.push({ role: 'assistant', content: [
      { type: 'thinking', thinking: 'I should read the file first. ', signature: 'EqQBCkYIBxgCKkA' + 'zQ3x'.repeat(60) },
      { type: 'tool_use', id: `toolu_${turn}`, name: 'Read', input: { file_path: `/work/src/module${turn}.ts` } },
    ] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: fileText(turn, 60) }] });
  }
  return Buffer.from(JSON.stringify(body));
}

/** The bench's small chat body and agent bodies of a first turn and of turns deep into a session. */
export function agentBodies(): Array<[string, Buffer]> {
  return [
    ['bench chat (cases.ts)', Buffer.from(JSON.stringify({ model: 'bench-gpt', messages: [{ role: 'user', content: 'Say hello in a few words.' }], max_tokens: 64 }))],
    ['codex, first turn', codexBody(60_000)],
    ['codex, deep turn', codexBody(400_000)],
    ['claude code, first turn', claudeCodeBody(60_000)],
    ['claude code, deep turn', claudeCodeBody(400_000)],
    ['claude code, 1 MB', claudeCodeBody(1_000_000)],
  ];
}
