// GET and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items for the responses
// Relay keeps (translated routes), in OpenAI's shapes. Another key's response is as unknown as none.
import { RelayError, type RelayContext } from '../../core/plugin-api.ts';
import { echoedName, type StoredResponse } from '../../core/plugin-api/canonical.ts';

interface ListQuery { order?: string; limit?: string; after?: string }

function notFound(id: string): RelayError {
  return new RelayError('RELAY_ERR_RESPONSE_NOT_FOUND', `Response with id '${id}' not found.`);
}

/** OpenAI's input_items list: newest first unless order=asc, `limit` (1-100, 20) after the `after` item. */
export function inputItemsPage(stored: StoredResponse, query: ListQuery): Record<string, unknown> {
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new RelayError('RELAY_ERR_BAD_REQUEST', 'order must be asc or desc.', { field: 'order' });
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new RelayError('RELAY_ERR_BAD_REQUEST', 'limit must be an integer from 1 to 100.', { field: 'limit' });
  let items = stored.items.slice(stored.inputFrom);
  if (order === 'desc') items = items.reverse();
  if (query.after !== undefined) {
    const at = items.findIndex((item) => item.id === query.after);
    if (at < 0) throw new RelayError('RELAY_ERR_ITEM_NOT_FOUND', `Item with id '${echoedName(query.after)}' not found in this response's input.`, { field: 'after' });
    items = items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: items.length > limit };
}

export function mountStoredResponseRoutes(relay: RelayContext, prefix: string, tags: string[]): void {
  const state = relay.responsesState;
  const security = [{ relayKey: [] }];
  const ownerOf = async (request: Parameters<RelayContext['pipeline']['authenticate']>[0]) => state.ownerOf(await relay.pipeline.authenticate(request, 'openai.responses'));

  relay.inference.get<{ Params: { id: string } }>(`${prefix}/v1/responses/:id`, {
    config: { shape: 'openai.responses' },
    schema: { summary: 'A response Relay stored (translated routes), in OpenAI\'s shape', tags, security },
  }, async (request) => {
    const stored = await state.get(await ownerOf(request), request.params.id);
    if (!stored) throw notFound(request.params.id);
    return stored.response;
  });

  relay.inference.delete<{ Params: { id: string } }>(`${prefix}/v1/responses/:id`, {
    config: { shape: 'openai.responses' },
    schema: { summary: 'Deletes a response Relay stored', tags, security },
  }, async (request) => {
    if (!await state.delete(await ownerOf(request), request.params.id)) throw notFound(request.params.id);
    return { id: request.params.id, object: 'response', deleted: true };
  });

  relay.inference.get<{ Params: { id: string }; Querystring: ListQuery }>(`${prefix}/v1/responses/:id/input_items`, {
    config: { shape: 'openai.responses' },
    schema: { summary: 'The input items of a response Relay stored, in OpenAI\'s list shape', tags, security },
  }, async (request) => {
    const stored = await state.get(await ownerOf(request), request.params.id);
    if (!stored) throw notFound(request.params.id);
    return inputItemsPage(stored, request.query);
  });
}
