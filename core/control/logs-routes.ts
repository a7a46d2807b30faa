// GET /api/logs, /api/logs/:requestId, /api/usage/{events,summary,timeseries} and
// /api/usage/sessions[/:sessionId] (agent sessions: Codex threads, Claude Code sessions): reads over the
// selected usage backend and every other loaded one (log-sources.ts), and the payload backends for
// captured bodies, which viewers do not read unless the payload-logging setting lets them.
// Authentication is the control plane's; errors are RelayErrors rendered by its error handler.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { Observer } from '../observer/observer.ts';
import { parseBucket, parseFilter, parseSince, type FilterParams } from '../observer/query-params.ts';
import {
  ListQuerySchema, ListResponseSchema, LogDetailSchema, RequestIdParamsSchema, SessionParamsSchema, SessionQuerySchema,
  SessionResponseSchema, SessionsQuerySchema, SessionsResponseSchema, SummaryQuerySchema, SummaryResponseSchema,
  TimeseriesQuerySchema, TimeseriesResponseSchema,
} from '../observer/schemas.ts';
import { acrossKeys, mergeSessions } from '../observer/sessions.ts';
import { emptyTotals } from '../observer/usage-query.ts';
import { mergePages, mergeSummaries, mergeTimeseries } from '../observer/merge-reads.ts';
import { costsByCurrency, groupCostsByCurrency, mergeCosts, mergeGroupCosts, timeseriesInCurrency, type CurrencyCost } from '../observer/costs-by-currency.ts';
import type { CapturedPayload } from '../hooks.ts';
import type { SessionsQuery, SummaryQuery, TimeseriesPoint, TimeseriesQuery, UsageBackend, UsageFilter } from '../observer/types.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import { refuseSlugAsId } from './slug-as-id.ts';
import { askBackend, readEach, skippedByAny, sourcesOf, type SkippedBackend, type Source } from './log-sources.ts';
import { callerIsViewer } from './auth-guard.ts';

/** The part of the observer these routes read through. */
export type LogReader = Pick<Observer, 'usageBackend' | 'payloadBackend' | 'loadedUsageBackends' | 'loadedPayloadBackends'>;

export interface LogRoutesOptions {
  /** Most points one timeseries may return. Default 1000. */
  maxTimeseriesPoints?: number;
  /** Window of a timeseries without since/from. Default 24h. */
  defaultTimeseriesWindow?: string;
  /** Whether viewers read captured bodies and headers (settings payload-logging viewersReadPayloads). Default: never. */
  viewersReadPayloads?: () => boolean;
  /** The catalog, to refuse a slug given where a filter takes an id (slug-as-id.ts). */
  snapshot?: () => CatalogSnapshot;
}

type ListParams = FilterParams & { limit?: number; cursor?: string };
type SummaryParams = FilterParams & { groupBy?: SummaryQuery['groupBy'] };
type TimeseriesParams = FilterParams & { bucket?: string; groupBy?: TimeseriesQuery['groupBy']; costCurrency?: string };
type SessionsParams = FilterParams & { limit?: number; sort?: SessionsQuery['sort'] };

/** Most relay keys' sessions one session id is read with (GET /api/usage/sessions/{id} lists each). */
const MAX_KEYS_PER_SESSION_ID = 500;

const errorResponses = { description: 'A RelayError: 400 names the bad parameter (`field`); RELAY_ERR_QUERY_UNSUPPORTED when the backend cannot answer.' };

interface AjvIssue { instancePath?: string; keyword?: string; params?: Record<string, unknown>; message?: string }

/** The values a parameter may take, when its schema is a union of literals (Ajv reports each `const` branch). */
function allowedValues(issues: AjvIssue[], path: string | undefined): unknown[] {
  return issues.filter((e) => e.instancePath === path).flatMap((e) => {
    if (e.keyword === 'const') return [e.params?.allowedValue];
    if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)) return e.params.allowedValues as unknown[];
    return [];
  });
}

/** Turns a schema validation failure into a 400 that names the parameter (and, for a choice, the choices). */
export function rejectInvalid(request: FastifyRequest): void {
  const error = request.validationError as (Error & { validation?: AjvIssue[] }) | undefined;
  if (!error) return;
  const issues = error.validation ?? [];
  const first = issues[0];
  const field = echoedName(first?.instancePath?.replace(/^\//, '') || String(first?.params?.missingProperty ?? first?.params?.additionalProperty ?? 'query'));
  const allowed = allowedValues(issues, first?.instancePath);
  // "must be equal to constant" names no constant: say which values are accepted instead.
  const message = allowed.length > 0 ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` : first?.message ?? error.message;
  throw new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: ${message}`, { field });
}

/** The selected usage backend, which must answer `method`, then every other loaded one. */
export function usageSources(reader: LogReader, method: 'list' | 'get' | 'summary' | 'timeseries' | 'sessions', what: string): Array<Source<UsageBackend>> {
  const backend = reader.usageBackend();
  if (!backend) throw new RelayError('RELAY_ERR_BACKEND_NOT_LOADED', 'the selected usage-logging backend is not loaded; load its plugin or select another');
  if (!backend[method]) throw unsupported(backend, what);
  return sourcesOf(backend, reader.loadedUsageBackends());
}

/** `skipped` is in an answer only when a backend was left out. */
const withSkipped = <T extends object>(answer: T, skipped: SkippedBackend[]): T => (skipped.length > 0 ? { ...answer, skipped } : answer);

/** The captured payload from the selected payload backend, else from another loaded one. */
async function findPayload(reader: LogReader, requestId: string, skipped: SkippedBackend[]): Promise<CapturedPayload | null> {
  const selected = reader.payloadBackend();
  const loaded = reader.loadedPayloadBackends();
  const ordered = selected ? [selected, ...loaded.filter((b) => b !== selected)] : loaded;
  for (const backend of ordered) {
    if (!backend.get) continue;
    try {
      const payload = await askBackend('payload', backend.id, () => backend.get!(requestId));
      if (payload) return payload;
    } catch (err) {
      const e = err as RelayError;
      skipped.push({ backend: backend.id, code: e.code, message: e.message });
    }
  }
  return null;
}

function unsupported(backend: UsageBackend, what: string): RelayError {
  return new RelayError('RELAY_ERR_QUERY_UNSUPPORTED', `the ${backend.id} usage backend cannot answer ${what}`);
}

/** Empty buckets are filled in so a chart has one point per bucket (ungrouped series only). */
function fillGaps(points: TimeseriesPoint[], fromMs: number, toMs: number, bucketSeconds: number): TimeseriesPoint[] {
  const size = bucketSeconds * 1000;
  const byTime = new Map(points.map((p) => [Date.parse(p.t), p]));
  const out: TimeseriesPoint[] = [];
  for (let t = Math.floor(fromMs / size) * size; t < toMs; t += size) {
    out.push(byTime.get(t) ?? { t: new Date(t).toISOString(), totals: emptyTotals() });
  }
  return out;
}

export function registerLogRoutes(app: FastifyInstance, observer: LogReader, options: LogRoutesOptions = {}): void {
  const maxPoints = options.maxTimeseriesPoints ?? 1000;
  const defaultWindow = options.defaultTimeseriesWindow ?? '24h';
  const viewersReadPayloads = options.viewersReadPayloads ?? (() => false);
  /** The query's filter; a slug where an id goes is a 400 naming the id. */
  const filterOf = (params: FilterParams, now?: number): UsageFilter => {
    const filter = parseFilter(params, now);
    if (options.snapshot) refuseSlugAsId(filter, options.snapshot());
    return filter;
  };

  async function listEvents(request: FastifyRequest) {
    rejectInvalid(request);
    const params = request.query as ListParams;
    const query = { ...filterOf(params), limit: params.limit ?? 50, cursor: params.cursor || undefined };
    const sources = usageSources(observer, 'list', 'a list of events');
    const { results, skipped } = await readEach('usage', sources, (b) => b.list?.(query) ?? null);
    return withSkipped(mergePages(results, query.limit), skipped);
  }

  const listSchema = (summary: string) => ({
    tags: ['logs'], summary, querystring: ListQuerySchema, response: { 200: ListResponseSchema, '4xx': errorResponses },
  });

  app.get('/api/logs', { schema: listSchema('Request log, newest first, paged by cursor'), attachValidation: true }, listEvents);
  app.get('/api/usage/events', { schema: { ...listSchema('Raw usage events, filterable, newest first'), tags: ['usage'] }, attachValidation: true }, listEvents);

  app.get('/api/logs/:requestId', {
    schema: { tags: ['logs'], summary: 'One request, with its captured payload (to admins; a viewer gets payload_withheld instead unless viewersReadPayloads)', params: RequestIdParamsSchema, response: { 200: LogDetailSchema, '4xx': errorResponses } },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const { requestId } = request.params as { requestId: string };
    const sources = usageSources(observer, 'get', 'a lookup by request id');
    const { results, skipped } = await readEach('usage', sources, (b) => b.get?.(requestId) ?? null);
    const event = results.find((found) => found !== null);
    if (!event) {
      // Not found, but a backend that could hold it did not answer: say that, not 404.
      const down = skipped.find((s) => s.code === 'RELAY_ERR_LOG_BACKEND_UNAVAILABLE');
      if (down) throw new RelayError(down.code, `no request ${JSON.stringify(echoedName(requestId))} in the backends that answered; ${down.message}`);
      throw new RelayError('RELAY_ERR_NOT_FOUND', `no logged request with id ${JSON.stringify(echoedName(requestId))}`, { field: 'requestId' });
    }
    // Prompts and answers may hold customer data or pasted credentials: admins only, by default.
    if (callerIsViewer(request) && !viewersReadPayloads()) return withSkipped({ ...event, payload_withheld: 'admin_only' }, skipped);
    const payload = await findPayload(observer, requestId, skipped);
    if (!payload) return withSkipped(event, skipped);
    return withSkipped({
      ...event,
      request_body: payload.request_body,
      response_body: payload.response_body,
      request_truncated: payload.request_truncated,
      response_truncated: payload.response_truncated,
      request_headers: payload.request_headers,
      response_headers: payload.response_headers,
    }, skipped);
  });

  app.get('/api/usage/summary', {
    schema: { tags: ['usage'], summary: 'Aggregated totals over a window', querystring: SummaryQuerySchema, response: { 200: SummaryResponseSchema, '4xx': errorResponses } },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const params = request.query as SummaryParams;
    const filter = filterOf(params);
    const query = { ...filter, groupBy: params.groupBy };
    const sources = usageSources(observer, 'summary', 'a summary');
    const { results, skipped } = await readEach('usage', sources, (b) => {
      if (!b.summary) return null;
      const summary = b.summary.bind(b);
      return Promise.all([summary(query), costsByCurrency(summary, filter)]).then(([totals, costs]) => ({ summary: totals, costs: costs ?? [] }));
    });
    const merged = mergeSummaries(results.map((r) => r.summary));
    const costs = mergeCosts(results.map((r) => r.costs));
    const window = { from: filter.from?.toISOString() ?? null, to: filter.to?.toISOString() ?? null };
    if (!merged.groups || costs.length < 2) return withSkipped({ ...window, ...merged, costs }, skipped);
    // Priced in several currencies: a group's totals.cost adds amounts that do not add, so each
    // group also gets its cost per currency.
    const currencies = costs.map((c) => c.currency);
    const perGroup = await readEach('usage', sources, (b) => (b.summary ? groupCostsByCurrency(b.summary.bind(b), query, currencies) : null));
    const groupCosts = mergeGroupCosts(perGroup.results);
    const groups = merged.groups.map((g) => ({ ...g, costs: groupCosts.get(g.key) ?? [] }));
    return withSkipped({ ...window, totals: merged.totals, groups, costs }, skippedByAny(skipped, perGroup.skipped));
  });

  app.get('/api/usage/sessions', {
    schema: {
      tags: ['usage'], summary: 'Agent sessions (Codex threads, Claude Code sessions): turns, models, tokens, cache hit ratio, cost, duration; the costliest first',
      querystring: SessionsQuerySchema, response: { 200: SessionsResponseSchema, '4xx': errorResponses },
    },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const params = request.query as SessionsParams;
    const filter = filterOf(params);
    // A window by default, as for a timeseries: sessions are grouped from every event in it.
    filter.from ??= parseSince(defaultWindow);
    const query: SessionsQuery = { ...filter, limit: params.limit ?? 50, sort: params.sort ?? 'cost' };
    const sources = usageSources(observer, 'sessions', 'a list of sessions');
    const { results, skipped } = await readEach('usage', sources, (b) => b.sessions?.(query) ?? null);
    return withSkipped({ from: filter.from.toISOString(), to: filter.to?.toISOString() ?? null, sessions: mergeSessions(results, query) }, skipped);
  });

  app.get('/api/usage/sessions/:sessionId', {
    schema: {
      tags: ['usage'], summary: "One agent session: its totals and its requests, newest first; relayKeyId narrows to that key's session with the id",
      params: SessionParamsSchema, querystring: SessionQuerySchema, response: { 200: SessionResponseSchema, '4xx': errorResponses },
    },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const { sessionId } = request.params as { sessionId: string };
    const params = request.query as { limit?: number; cursor?: string; relayKeyId?: string };
    // The id is the client's: with relayKeyId, that key's session; without, every key's with the id (as links made before keys split sessions expect).
    const filter = { sessionId, ...(params.relayKeyId !== undefined ? { relayKeyId: params.relayKeyId } : {}) };
    if (options.snapshot) refuseSlugAsId(filter, options.snapshot());
    const sessionSources = usageSources(observer, 'sessions', 'a session');
    const summaries = await readEach('usage', sessionSources, (b) => b.sessions?.({ ...filter, limit: MAX_KEYS_PER_SESSION_ID }) ?? null);
    const sessions = mergeSessions(summaries.results, { limit: MAX_KEYS_PER_SESSION_ID });
    const session = acrossKeys(sessions);
    if (!session) {
      const down = summaries.skipped.find((s) => s.code === 'RELAY_ERR_LOG_BACKEND_UNAVAILABLE');
      if (down) throw new RelayError(down.code, `no session ${JSON.stringify(echoedName(sessionId))} in the backends that answered; ${down.message}`);
      const ofKey = params.relayKeyId !== undefined ? ` of relay key ${JSON.stringify(echoedName(params.relayKeyId))}` : '';
      throw new RelayError('RELAY_ERR_NOT_FOUND', `no logged request of session ${JSON.stringify(echoedName(sessionId))}${ofKey}`, { field: 'sessionId' });
    }
    const query = { ...filter, limit: params.limit ?? 100, cursor: params.cursor || undefined };
    const pages = await readEach('usage', usageSources(observer, 'list', 'a list of events'), (b) => b.list?.(query) ?? null);
    // Priced in several currencies: its totals.cost adds amounts that do not add, so it also gets its cost in each
    // (read by summary when a backend's session gave no split).
    const priced = session.currencies.length > 1 && !session.costs && observer.usageBackend()?.summary
      ? await readEach('usage', usageSources(observer, 'summary', 'a summary'), (b) => (b.summary ? costsByCurrency(b.summary.bind(b), filter) : null))
      : null;
    const costs = session.costs ? { costs: session.costs } : priced ? { costs: mergeCosts(priced.results.filter((c): c is CurrencyCost[] => c !== null)) } : {};
    return withSkipped({ session, sessions, ...costs, ...mergePages(pages.results, query.limit) }, skippedByAny(summaries.skipped, pages.skipped, priced?.skipped ?? []));
  });

  app.get('/api/usage/timeseries', {
    schema: { tags: ['usage'], summary: 'Usage in time buckets', querystring: TimeseriesQuerySchema, response: { 200: TimeseriesResponseSchema, '4xx': errorResponses } },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const params = request.query as TimeseriesParams;
    const now = Date.now();
    const filter = filterOf(params, now);
    filter.from ??= parseSince(defaultWindow, now);
    const toMs = filter.to?.getTime() ?? now;
    const bucketSeconds = parseBucket(params.bucket ?? '1h');
    const points = Math.ceil((toMs - filter.from.getTime()) / (bucketSeconds * 1000));
    if (points > maxPoints) {
      throw new RelayError('RELAY_ERR_BAD_REQUEST', `bucket: ${points} buckets in this window; at most ${maxPoints}: choose a larger bucket or a shorter window`, { field: 'bucket' });
    }
    const query = { ...filter, bucketSeconds, groupBy: params.groupBy };
    const sources = usageSources(observer, 'timeseries', 'a timeseries');
    const costCurrency = params.costCurrency ?? null;
    const { results, skipped } = await readEach('usage', sources, (b) => {
      if (!b.timeseries) return null;
      return costCurrency === null ? b.timeseries(query) : timeseriesInCurrency(b.timeseries.bind(b), query, costCurrency);
    });
    const series = mergeTimeseries(results);
    return withSkipped({
      from: filter.from.toISOString(),
      to: new Date(toMs).toISOString(),
      bucketSeconds,
      costCurrency,
      points: params.groupBy ? series : fillGaps(series, filter.from.getTime(), toMs, bucketSeconds),
    }, skipped);
  });
}
