// Property: a random valid canonical request survives canonical -> shape (the vendor adapter's
// encodeRequest) -> canonical (the inbound codec of the same shape) with every field the shape
// can carry. `carried(shape, request)` applies the shape's written drop rules to the original;
// the round trip must give exactly that. Fixed seed, bounded runs.
import t from 'tap';
import fc from 'fast-check';
import type { CanonicalRequest, ContentPart, Message, Tool } from '../../core/plugin-api/canonical.ts';
import { CUSTOM_INPUT_SCHEMA, customToolDescription, markedToolResultContent } from '../../core/plugin-api/canonical.ts';
import { thinkingFor } from '../../plugins/vendor-anthropic/codec/thinking-budget.ts';
import { effortForBudget } from '../../plugins/wire-vendor-b/codec/thinking-budget.ts';
import { openaiEffort } from '../../plugins/vendor-openai/codec/reasoning-effort.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { thinkingFor as bedrockThinkingFor, isClaudeModel } from '../../plugins/vendor-bedrock/codec/thinking.ts';
import { UPSTREAM_SHAPES, readBackRequest, vendorFor, type UpstreamShape } from './harness.ts';

const SEED = 20260821;
const RUNS = 150;

const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,!?'"\\\n-]{0,30}$/);
const toolName = fc.constantFrom('lookup', 'exec_command', 'read_file', 'apply_patch_fn');
const jsonArgs = fc.dictionary(fc.constantFrom('q', 'path', 'n', 'flag'), fc.oneof(word, fc.integer({ min: -1000, max: 1000 }), fc.boolean()), { maxKeys: 3 })
  .map((o) => JSON.stringify(o));
const image = fc.record({
  source: fc.oneof(
    fc.constant({ type: 'url' as const, url: 'https://example.com/cat.png' }),
    fc.constant({ type: 'base64' as const, media_type: 'image/png', data: 'iVBORw0KGgo=' }),
  ),
  detail: fc.option(fc.constantFrom('auto' as const, 'low' as const, 'high' as const), { nil: undefined }),
}).map(({ source, detail }) => ({ type: 'image' as const, source, ...(detail === undefined ? {} : { detail }) }));
const reasoningPart = fc.oneof(
  fc.record({ text: word, signature: word }).map((r) => ({ type: 'reasoning' as const, text: r.text, signature: `sig${r.signature.length}`, origin: 'anthropic' })),
  fc.record({ text: word }).map((r) => ({ type: 'reasoning' as const, text: r.text, encrypted: 'gAAAAenc', origin: 'openai', id: 'rs_1' })),
);

/** A search the upstream ran, as each vendor's decoder reads it back from its raw blocks or item. */
const searchPart = fc.record({ origin: fc.constantFrom('openai', 'anthropic'), query: word, url: fc.constantFrom('https://example.com/a', 'https://example.org/b') })
  .map(({ origin, query, url }): ContentPart => {
    if (origin === 'openai') {
      const raw = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query, sources: [{ type: 'url', url }] } };
      return { type: 'web_search_call', id: 'ws_1', query, sources: [{ url }], status: 'completed', origin, raw };
    }
    const use = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query } };
    const result = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url, title: 'T', encrypted_content: 'enc', page_age: null }] };
    return { type: 'web_search_call', id: 'srvtoolu_1', query, sources: [{ url, title: 'T' }], status: 'completed', origin, raw: [use, result] };
  });
const webSearchTool = fc.record({
  max_uses: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  allowed_domains: fc.option(fc.constant(['example.com']), { nil: undefined }),
  blocked_domains: fc.option(fc.constant(['example.net']), { nil: undefined }),
  user_location: fc.option(fc.constant({ country: 'DE', city: 'Berlin' }), { nil: undefined }),
  search_context_size: fc.option(fc.constantFrom('low' as const, 'high' as const), { nil: undefined }),
}).map((fields): Tool => ({ type: 'web_search', ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) }));

interface Round { reasoning: ContentPart | null; search: ContentPart | null; text: string | null; calls: Array<{ name: string; args: string; error: boolean; result: string }>; system: string | null; user: string }

const round = (names: string[]): fc.Arbitrary<Round> => fc.record({
  reasoning: fc.option(reasoningPart, { nil: null }),
  search: fc.option(searchPart, { nil: null }),
  text: fc.option(word, { nil: null }),
  calls: names.length === 0 ? fc.constant([]) : fc.array(fc.record({ name: fc.constantFrom(...names), args: jsonArgs, error: fc.boolean(), result: word }), { maxLength: 2 }),
  system: fc.option(word, { nil: null }),
  user: word,
});

const functionTool = (name: string) => fc.record({
  description: fc.option(word, { nil: undefined }),
  strict: fc.option(fc.boolean(), { nil: undefined }),
}).map(({ description, strict }): Tool => ({
  type: 'function', name, parameters: { type: 'object', properties: { q: { type: 'string' } } },
  ...(description === undefined ? {} : { description }), ...(strict === undefined ? {} : { strict }),
}));
const customTool: Tool = { type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } };

const requestArb: fc.Arbitrary<CanonicalRequest> = fc.record({
  toolNames: fc.uniqueArray(toolName, { maxLength: 3 }),
  custom: fc.boolean(),
}).chain(({ toolNames, custom }) => {
  const names = [...toolNames, ...(custom ? ['apply_patch'] : [])];
  return fc.record({
    model: fc.constantFrom('m1', 'gpt-x', 'claude-y'),
    system: fc.option(fc.array(word.map((text) => ({ type: 'text' as const, text })), { minLength: 1, maxLength: 2 }), { nil: undefined }),
    first: fc.tuple(word, fc.option(image, { nil: null })),
    rounds: fc.array(round(names), { maxLength: 3 }),
    tools: fc.tuple(...toolNames.map(functionTool)),
    webSearch: fc.option(webSearchTool, { nil: undefined }),
    tool_choice: fc.option(names.length === 0 ? fc.constantFrom('auto' as const, 'none' as const) : fc.oneof(fc.constantFrom('auto' as const, 'none' as const, 'required' as const), fc.constantFrom(...names).map((name) => ({ type: 'tool' as const, name }))), { nil: undefined }),
    parallel_tool_calls: fc.option(fc.boolean(), { nil: undefined }),
    max_output_tokens: fc.option(fc.integer({ min: 16, max: 100000 }), { nil: undefined }),
    temperature: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    top_p: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    stop: fc.option(fc.array(word, { minLength: 1, maxLength: 4 }), { nil: undefined }),
    reasoning: fc.option(fc.oneof(
      fc.record({ effort: fc.constantFrom('low' as const, 'medium' as const, 'high' as const) }),
      fc.record({ budget_tokens: fc.integer({ min: 1024, max: 60000 }) }),
      fc.record({ effort: fc.constant('high' as const), summary: fc.constant(true) }),
    ), { nil: undefined }),
    response_format: fc.option(fc.oneof(
      fc.constant({ type: 'json_schema' as const, name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true }),
      fc.constant({ type: 'json_object' as const }),
    ), { nil: undefined }),
    user: fc.option(word, { nil: undefined }),
    metadata: fc.option(fc.constant({ k: 'v' }), { nil: undefined }),
  }).map((g): CanonicalRequest => {
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: g.first[0] }, ...(g.first[1] ? [g.first[1]] : [])] }];
    g.rounds.forEach((r, i) => {
      const assistant: ContentPart[] = [];
      if (r.reasoning) assistant.push(r.reasoning);
      if (r.search) assistant.push(r.search);
      if (r.text !== null) assistant.push({ type: 'text', text: r.text });
      r.calls.forEach((c, j) => {
        const isCustom = custom && c.name === 'apply_patch';
        assistant.push({ type: 'tool_call', id: `call_${i}_${j}`, name: c.name, arguments: isCustom ? `*** Begin Patch\n${c.result}` : c.args, tool_kind: isCustom ? 'custom' : 'function' });
      });
      if (assistant.length > 0) messages.push({ role: 'assistant', content: assistant });
      if (r.calls.length > 0) {
        messages.push({ role: 'user', content: r.calls.map((c, j) => ({ type: 'tool_result' as const, tool_call_id: `call_${i}_${j}`, content: [{ type: 'text' as const, text: c.result }], ...(c.error ? { is_error: true } : {}) })) });
      }
      if (r.system !== null) messages.push({ role: 'system', content: [{ type: 'text', text: r.system }] });
      messages.push({ role: 'user', content: [{ type: 'text', text: r.user }] });
    });
    const tools = [...g.tools, ...(custom ? [customTool] : []), ...(g.webSearch ? [g.webSearch] : [])];
    const out: CanonicalRequest = { model: g.model, messages };
    const set = <K extends keyof CanonicalRequest>(key: K, value: CanonicalRequest[K] | undefined): void => {
      if (value !== undefined) out[key] = value;
    };
    set('system', g.system);
    if (tools.length > 0) out.tools = tools;
    set('tool_choice', g.tool_choice);
    set('parallel_tool_calls', g.parallel_tool_calls);
    set('max_output_tokens', g.max_output_tokens);
    set('temperature', g.temperature);
    set('top_p', g.top_p);
    set('stop', g.stop);
    set('reasoning', g.reasoning);
    set('response_format', g.response_format);
    set('user', g.user);
    set('metadata', g.metadata);
    return out;
  });
});

// ------------------------------------------------------------------ what each shape carries

const clone = <T>(v: T): T => structuredClone(v);
const hasTools = (r: CanonicalRequest): boolean => (r.tools ?? []).length > 0;

/** Custom tools as the function upstreams without custom tools see, and their calls wrapped. */
function customAsFunction(r: CanonicalRequest): void {
  r.tools = r.tools?.map((tool) => (tool.type === 'custom' ? { type: 'function', name: tool.name, description: customToolDescription(tool), parameters: { ...CUSTOM_INPUT_SCHEMA } } : tool));
  for (const m of r.messages) {
    m.content = m.content.map((p) => (p.type === 'tool_call' && p.tool_kind === 'custom' ? { ...p, arguments: JSON.stringify({ input: p.arguments }), tool_kind: 'function' } : p));
  }
}

/** An upstream without web search: the tool and the searches of the history are left out (and named). */
function withoutWebSearch(r: CanonicalRequest): void {
  r.tools = r.tools?.filter((tool) => tool.type !== 'web_search');
  if (r.tools?.length === 0) delete r.tools;
  for (const m of r.messages) m.content = m.content.filter((p) => p.type !== 'web_search_call');
}

/** Only the searches `origin` ran go back to it; the tool keeps the fields its vendor has. */
function webSearchOf(r: CanonicalRequest, origin: string, unmapped: Array<'max_uses' | 'blocked_domains' | 'search_context_size'>): void {
  r.tools = r.tools?.map((tool) => {
    if (tool.type !== 'web_search') return tool;
    const kept = { ...tool };
    for (const field of unmapped) delete kept[field];
    return kept;
  });
  for (const m of r.messages) m.content = m.content.filter((p) => p.type !== 'web_search_call' || p.origin === origin);
}

function withoutEmptyMessages(r: CanonicalRequest): void {
  r.messages = r.messages.filter((m) => m.content.length > 0);
}

const CARRIED: Record<UpstreamShape, (r: CanonicalRequest) => CanonicalRequest> = {
  'openai.chat': (original) => {
    const r = clone(original);
    customAsFunction(r);
    withoutWebSearch(r);
    delete r.metadata;
    const effort = openaiEffort(r.reasoning);
    if (r.reasoning) r.reasoning = effort === undefined ? undefined : { effort };
    if (!r.reasoning) delete r.reasoning;
    for (const m of r.messages) {
      m.content = m.content.filter((p) => p.type !== 'reasoning').map((p) => {
        if (p.type !== 'tool_result') return p;
        // No error flag: the error is marked in the text.
        const { is_error: _mapped, ...rest } = p;
        return { ...rest, content: markedToolResultContent(p) };
      });
    }
    withoutEmptyMessages(r);
    if (!hasTools(r)) { delete r.tool_choice; delete r.parallel_tool_calls; }
    return r;
  },
  'openai.responses': (original) => {
    const r = clone(original);
    webSearchOf(r, 'openai', ['max_uses', 'blocked_domains']);
    if (r.reasoning) {
      const effort = openaiEffort(r.reasoning);
      r.reasoning = { ...(effort === undefined ? {} : { effort }), ...(r.reasoning.summary ? { summary: true } : {}) };
    }
    r.tools = r.tools?.map((tool) => (tool.type === 'function' ? { ...tool, strict: tool.strict ?? false } : tool));
    if (!r.tools) delete r.tools;
    for (const m of r.messages) {
      m.content = m.content.filter((p) => p.type !== 'reasoning' || (p.origin === 'openai' && p.encrypted !== undefined)).map((p) => {
        if (p.type === 'tool_result') {
          const { is_error: _mapped, ...rest } = p;
          return { ...rest, content: markedToolResultContent(p) };
        }
        if (p.type === 'image') return { ...p, detail: p.detail ?? 'auto' };
        return p;
      });
    }
    withoutEmptyMessages(r);
    if (!hasTools(r)) delete r.tool_choice;
    return r;
  },
  'anthropic.messages': (original) => {
    const r = clone(original);
    customAsFunction(r);
    webSearchOf(r, 'anthropic', ['search_context_size']);
    if (r.response_format?.type === 'json_schema') r.response_format = { type: 'json_schema', name: 'response', schema: r.response_format.schema };
    else delete r.response_format;
    delete r.metadata;
    if (!hasTools(r)) { delete r.tool_choice; delete r.parallel_tool_calls; }
    else if (r.parallel_tool_calls !== false) delete r.parallel_tool_calls;
    else if (r.tool_choice === undefined) r.tool_choice = 'auto'; // disable_parallel_tool_use rides on a tool_choice
    if (r.tool_choice === 'none' && r.parallel_tool_calls === false) delete r.parallel_tool_calls;
    // System messages join the top-level system prompt; same-role neighbours merge.
    const system = [...(r.system ?? []), ...r.messages.filter((m) => m.role === 'system').flatMap((m) => m.content as Array<{ type: 'text'; text: string }>)];
    if (system.length > 0) r.system = system;
    const merged: Message[] = [];
    for (const m of r.messages) {
      if (m.role === 'system') continue;
      const content = m.content.filter((p) => p.type !== 'reasoning' || (p.origin === 'anthropic' && p.signature !== undefined)).map((p) => {
        if (p.type === 'image') {
          const { detail: _dropped, ...rest } = p;
          return rest;
        }
        return p;
      });
      if (content.length === 0) continue;
      const last = merged.at(-1);
      if (last && last.role === m.role) last.content.push(...content);
      else merged.push({ role: m.role, content });
    }
    for (const m of merged) if (m.role === 'user') m.content = [...m.content.filter((p) => p.type === 'tool_result'), ...m.content.filter((p) => p.type !== 'tool_result')];
    r.messages = merged;
    // Thinking is off when a tool is forced, or when the turn whose tool calls are answered
    // does not open with signed thinking (Anthropic requires it).
    const forced = hasTools(r) && (r.tool_choice === 'required' || typeof r.tool_choice === 'object');
    const [previous, last] = merged.slice(-2);
    const unsignedToolTurn = last?.role === 'user' && last.content.some((p) => p.type === 'tool_result') && previous?.role === 'assistant' && previous.content[0]?.type !== 'reasoning';
    const { thinking, max_tokens } = thinkingFor(forced || unsignedToolTurn ? { ...r, reasoning: undefined } : r);
    r.max_output_tokens = max_tokens;
    if (thinking?.type === 'enabled') r.reasoning = { budget_tokens: thinking.budget_tokens, effort: effortForBudget(thinking.budget_tokens) };
    else if (thinking?.type === 'adaptive') r.reasoning = {};
    else delete r.reasoning;
    if (thinking) { delete r.temperature; delete r.top_p; }
    if (r.temperature !== undefined) delete r.top_p;
    if (r.stop) r.stop = r.stop.filter((stop) => stop.trim() !== '');
    if (r.stop?.length === 0) delete r.stop;
    return r;
  },
  'bedrock.converse': (original) => {
    const r = clone(original);
    customAsFunction(r);
    withoutWebSearch(r);
    if (r.response_format?.type === 'json_schema') {
      const { strict: _dropped, ...format } = r.response_format;
      r.response_format = format;
    } else delete r.response_format;
    delete r.parallel_tool_calls;
    // tool_choice none is no tools, unless the history's tool calls need them declared.
    const toolHistory = r.messages.some((m) => m.content.some((p) => p.type === 'tool_call' || p.type === 'tool_result'));
    if (r.tool_choice === 'none' && !toolHistory) delete r.tools;
    if (!hasTools(r) || r.tool_choice === 'none') delete r.tool_choice;
    const system = [...(r.system ?? []), ...r.messages.filter((m) => m.role === 'system').flatMap((m) => m.content as Array<{ type: 'text'; text: string }>)];
    if (system.length > 0) r.system = system;
    const merged: Message[] = [];
    for (const m of r.messages) {
      if (m.role === 'system') continue;
      const content = m.content.filter((p) => p.type !== 'reasoning' || (p.origin === 'bedrock' && p.signature !== undefined)).map((p): ContentPart => {
        if (p.type !== 'image') return p;
        const { detail: _dropped, ...rest } = p;
        return rest;
      });
      if (content.length === 0) continue;
      const last = merged.at(-1);
      if (last && last.role === m.role) last.content.push(...content);
      else merged.push({ role: m.role, content });
    }
    for (const m of merged) if (m.role === 'user') m.content = [...m.content.filter((p) => p.type === 'tool_result'), ...m.content.filter((p) => p.type !== 'tool_result')];
    r.messages = merged;
    const forced = hasTools(r) && (r.tool_choice === 'required' || typeof r.tool_choice === 'object');
    const [previous, last] = merged.slice(-2);
    const unsignedToolTurn = last?.role === 'user' && last.content.some((p) => p.type === 'tool_result') && previous?.role === 'assistant' && previous.content[0]?.type !== 'reasoning';
    const thinkingAllowed = isClaudeModel(r.model) && !forced && !unsignedToolTurn;
    const { thinking, maxTokens } = bedrockThinkingFor({ ...r, reasoning: thinkingAllowed ? r.reasoning : undefined }, undefined, false);
    if (maxTokens === undefined) delete r.max_output_tokens;
    else r.max_output_tokens = maxTokens;
    if (thinking?.type === 'enabled') r.reasoning = { budget_tokens: thinking.budget_tokens, effort: effortForBudget(thinking.budget_tokens) };
    else if (thinking?.type === 'adaptive') r.reasoning = {};
    else delete r.reasoning;
    if (thinking) { delete r.temperature; delete r.top_p; }
    if (r.temperature !== undefined) delete r.top_p;
    if (r.stop) r.stop = r.stop.filter((stop) => stop.trim() !== '');
    if (r.stop?.length === 0) delete r.stop;
    return r;
  },
};

/** What each shape refuses (a 400 naming it) instead of dropping: it changes the answer and the upstream cannot take it. */
const fetchedImage = (r: CanonicalRequest): boolean => r.messages.some((m) => m.content.some((p) => p.type === 'image' && p.source.type === 'url' && !/^(data:|s3:)/.test(p.source.url)));
const REFUSES: Record<UpstreamShape, (r: CanonicalRequest) => boolean> = {
  'openai.chat': () => false,
  'openai.responses': (r) => (r.stop?.length ?? 0) > 0,
  'anthropic.messages': (r) => r.response_format?.type === 'json_object',
  'bedrock.converse': (r) => r.response_format?.type === 'json_object' || fetchedImage(r),
};

for (const shape of UPSTREAM_SHAPES) {
  t.test(`canonical -> ${shape} -> canonical keeps what ${shape} carries`, async (t) => {
    fc.assert(fc.property(requestArb, (request) => {
      // What would change the answer and the upstream cannot take is a 400, never a drop.
      if (REFUSES[shape](request)) {
        try {
          vendorFor(shape).encodeRequest(shape, request, fakeRoute(request.model));
        } catch (err) {
          if ((err as { status?: number }).status === 400) return;
          throw err;
        }
        throw new Error(`${shape} took ${JSON.stringify(request)} without refusing it`);
      }
      const body = vendorFor(shape).encodeRequest(shape, request, fakeRoute(request.model));
      const back = readBackRequest(shape, body, request.model);
      const expected = CARRIED[shape](request);
      // Normalise key order and undefined fields before comparing.
      const norm = (v: unknown): string => JSON.stringify(v, (_k, value: unknown) => (value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).filter(([, x]) => x !== undefined).sort(([a], [b]) => a.localeCompare(b)))
        : value));
      if (norm(back) !== norm(expected)) {
        throw new Error(`round trip through ${shape} differs\nexpected ${norm(expected)}\nactual   ${norm(back)}`);
      }
    }), { seed: SEED, numRuns: RUNS });
    t.pass(`${RUNS} random requests`);
  });
}
