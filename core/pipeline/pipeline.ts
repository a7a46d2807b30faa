// The request pipeline: parse (done by the wire plugin) -> authenticate -> rate limits ->
// resolveModel -> dispatch with failover (passthrough or translation) -> render -> record.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { RelayError } from '../errors.ts';
import type { InboundHttpRequest, InboundRequest, Principal, RequestTrace, RequestTracer, Route, ShapeId, UsageEvent } from '../hooks.ts';
import type { InferenceCall, Pipeline } from '../plugins/context.ts';
import type { Hooks } from '../plugins/registry.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import type { FallbackCondition, Model } from '../catalog/kinds.ts';
import type { HostKeyEnvironment } from '../crypto/host-key-env.ts';
import type { Sealer } from '../crypto/sealing.ts';
import type { Observer } from '../observer/observer.ts';
import { BodyCapture, buildCapturedPayload } from '../observer/capture.ts';
import { toRelayError } from '../server/errors.ts';
import { Attempt, ClientGone } from './attempt.ts';
import { Cancellation } from '../http/cancellation.ts';
import type { UpstreamClient } from '../http/upstream-client.ts';
import { ClientWriter } from './client-writer.ts';
import { CredentialResolver } from './credentials.ts';
import { SendableHosts } from './sendable-host.ts';
import type { AttemptResult } from './attempt.ts';
import { ADMITTED, REFUSED, type FailureKind, type KeyHealth } from './key-health.ts';
import { passthrough } from './passthrough.ts';
import type { RateLimiter, Permit } from './rate-limit.ts';
import { RequestRecord } from './request-record.ts';
import { RequestLog } from './request-log.ts';
import { refusedRelayKeyOf } from './relay-key-auth.ts';
import { knownClientAttribution } from '../attribution/known-clients.ts';
import type { Attribution } from '../plugins/context.ts';
import { AnsweredRequests } from './answered-requests.ts';
import { circuitRefusal } from './no-route-error.ts';
import { createCatalogResolver, policyGrants, reachableModels, type ResolverDeps } from './resolve.ts';
import { conditionOfFailure, conditionOfRefusal, exhausted, takes, type FallbackSkip, type ModelAttempt } from './fallbacks.ts';
import { translate } from './translate.ts';
import { clearlyOverWindow } from './context-window.ts';
import { countedOverWindow, nearWindow } from './exact-count.ts';
import { MISSING_FOR_MS, MissingCounters } from './missing-counters.ts';
import { effectiveWindow } from '../context-windows/lookup.ts';
import { NO_RETRY_POLICY, RetryRun } from './retry-policy.ts';
import { standardSpeedFor } from './fast-mode.ts';
import type { BindingMeter } from './binding-meter.ts';
import type { LastUsed } from './last-used.ts';
import { UpstreamTries } from './upstream-tries.ts';
import { planHedge } from './hedge.ts';
import { createRoutingMetrics } from './routing-metrics.ts';
import type { BudgetGuard } from '../budgets/budget-guard.ts';
import { clientRequestIdOf } from '../http/request-id.ts';
import { createInferenceMetrics } from './inference-metrics.ts';
import { canonicalPrompt, TranslationSource } from './translation-source.ts';
import { ForwardedCapture, mixesShapes } from './forwarded-capture.ts';
import { answeredWithoutUsage, endedEarlyWithUsage, meterUnreported, raiseOutputToSeen, unreadableParts } from './unreported-usage.ts';
import { proxyHostsOf, reachesAny, withinHosts } from './proxy-scope.ts';

export interface PipelineDeps {
  hooks: Hooks;
  sync: CatalogSync;
  observer: Observer;
  health: KeyHealth;
  rateLimiter: RateLimiter;
  /** Refuses a request whose budget is spent; absent in tests that build a pipeline without one. */
  budgets?: BudgetGuard;
  sealer: Sealer;
  /** Where host keys with valueFrom.kind env read their value. */
  hostKeyEnv: HostKeyEnvironment;
  log: Logger;
  metrics: Registry;
  /** Bounds on holding a stream's opening frames (DESIGN.md "the first byte"). */
  holdMaxMs?: number;
  holdMaxBytes?: number;
  /** How long an answer's write may wait for a client that stopped reading (server.writeStallTimeoutMs). */
  writeStallMs?: number;
  upstream: UpstreamClient;
  /** In-flight counts and latencies per binding for spec.balancing (binding-meter.ts); absent in tests without one. */
  meter?: BindingMeter;
  /** When each host key was last sent upstream (last-used.ts); absent in tests without one. */
  hostKeyLastUsed?: LastUsed;
}

export interface KernelPipeline extends Pipeline {
  /**
   * Records a request refused before the pipeline ran (malformed JSON, wrong content type, body
   * too large, a missing model): every request is logged, these included.
   */
  recordRejected(requestId: string, json: unknown, shape: ShapeId, err: RelayError, principal?: Principal | null, headers?: InboundHttpRequest['headers']): void;
  /**
   * Records a request that a Fastify route of the inference listener answered itself (a model
   * list, the HEAD probe, an unknown path), once its answer is sent: see answered-requests.ts.
   */
  recordAnswered(request: FastifyRequest, reply: FastifyReply): void;
  /** Authenticates a request that the pipeline itself records (an inference POST), from its headers. */
  authenticateInference(request: InboundHttpRequest, shape: ShapeId): Principal | Promise<Principal>;
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** Names the header the client's own SDK sends its API key in: Anthropic's send x-api-key. */
function missingKey(shape: ShapeId): RelayError {
  if (shape.startsWith('anthropic.')) {
    return new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'Missing relay key: send it as x-api-key: <relay key> (the header Anthropic SDKs and Claude Code send their API key in), or Authorization: Bearer <relay key>.');
  }
  return new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'Missing relay key: send it as Authorization: Bearer <relay key>.');
}

/** The tracer's trace of this request; a tracer that throws leaves the request untraced, never failed. */
function startTrace(tracer: RequestTracer, request: InboundHttpRequest, call: InferenceCall, log: RequestLog): RequestTrace | null {
  try {
    return tracer.startRequest({ id: request.id, method: request.method, url: request.url, headers: request.headers, shape: call.shape }, call.model, call.stream);
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'request tracer failed to start a trace');
    return null;
  }
}

function endTrace(trace: RequestTrace, event: UsageEvent, log: RequestLog): void {
  try {
    trace.end(event);
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'request tracer failed to end a trace');
  }
}

export function createPipeline(deps: PipelineDeps): KernelPipeline {
  const { hooks, sync, observer, health, log } = deps;
  const credentials = new CredentialResolver(deps.sealer, deps.hostKeyEnv);
  const sendable = new SendableHosts(deps.sealer, (obj, msg) => log.warn(obj, msg));
  const resolverDeps: ResolverDeps = {
    snapshot: () => sync.snapshot(), adapters: hooks.adapters, translatable: (s) => hooks.codecs.has(s), health, meter: deps.meter, sendable: (host) => sendable.of(host),
  };
  const defaultResolver = createCatalogResolver(resolverDeps);
  const pluginResolver = sendable.resolver(() => hooks.resolver!);
  const holdBounds = { maxMs: deps.holdMaxMs ?? 2_000, maxBytes: deps.holdMaxBytes ?? 64 * 1024 };

  const inferenceMetrics = createInferenceMetrics(deps.metrics);
  const missingCounters = new MissingCounters((route, status) => log.warn(
    { host: route.host.metadata.slug, model: route.upstreamModel, status },
    `the host's token counter answered ${status}: not asked again for ${MISSING_FOR_MS / 60_000} minutes, prompts of answers without usage are estimated (narrow the provider's shapes if the server has no counter)`,
  ));
  const routingMetrics = createRoutingMetrics(deps.metrics);
  const requests = new Counter({
    name: 'relay_inference_requests_total', help: 'Inference requests by inbound shape and status', labelNames: ['shape', 'status'], registers: [deps.metrics],
  });
  const countRequest = (shape: ShapeId, status: number): void => {
    requests.inc({ shape, status: String(status) });
  };
  const duration = new Histogram({
    name: 'relay_inference_duration_seconds', help: 'Inference request duration (to the last byte)', labelNames: ['shape'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers: [deps.metrics],
  });

  /** The first authenticator that knows the request; synchronous while the authenticators are. */
  function authenticateNow(request: InboundHttpRequest, shape: ShapeId): Principal | Promise<Principal> {
    const inbound: InboundRequest = { id: request.id, method: request.method, url: request.url, headers: request.headers, shape };
    const from = (start: number): Principal | Promise<Principal> => {
      const list = hooks.authenticators;
      for (let i = start; i < list.length; i++) {
        const principal = list[i].fn(inbound);
        if (isThenable(principal)) return Promise.resolve(principal).then((found) => found ?? from(i + 1));
        if (principal) return principal;
      }
      throw missingKey(shape);
    };
    return from(0);
  }


  const answered = new AnsweredRequests();

  async function authenticate(request: InboundHttpRequest, shape: ShapeId): Promise<Principal> {
    const principal = await authenticateNow(request, shape);
    answered.noteAuthenticated(request, principal);
    return principal;
  }

  function renderError(shape: ShapeId, err: RelayError): { status: number; headers: Record<string, string>; body: unknown } {
    const codec = hooks.codecs.get(shape);
    const body = err.toBody();
    // Every shape's answer names Relay's code, Anthropic's error body having no place for it.
    const headers = { ...(err.headers ?? {}), 'x-relay-error-code': err.code };
    if (!codec) return { status: err.status, headers, body: { error: body } };
    const rendered = codec.renderError(body);
    return { status: rendered.status, headers: { ...headers, ...(rendered.headers ?? {}) }, body: rendered.body };
  }

  function sendError(reply: FastifyReply, shape: ShapeId, err: unknown): void {
    const relayErr = toRelayError(err);
    answered.noteError(reply.request, shape, relayErr.code, refusedRelayKeyOf(relayErr));
    const rendered = renderError(shape, relayErr);
    void reply.code(rendered.status).headers(rendered.headers).type('application/json').send(rendered.body);
  }

  /** Writes a JSON answer in one go; returns the headers sent (for payload capture). */
  function writeJson(res: ServerResponse, requestId: string, status: number, headers: Record<string, string>, text: string): Record<string, string> {
    const sent = { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'x-request-id': requestId };
    res.writeHead(status, sent);
    res.end(text);
    return sent;
  }

  async function handle(request: InboundHttpRequest, res: ServerResponse, call: InferenceCall): Promise<void> {
    const record = new RequestRecord(request.id, call.shape, call.model || null, call.stream);
    record.clientRequestId = clientRequestIdOf(request.headers);
    const requestLog = new RequestLog(log, request.id, record.clientRequestId);
    // The route's own attribution (an agent's endpoint), else known clients by their headers.
    const attribution = call.attribution ?? knownClientAttribution(request.headers);
    if (attribution) {
      record.client = attribution.client ?? null;
      record.extras = { ...(attribution.extras ?? {}) };
    }
    const cancellation = new Cancellation();
    const onClose = () => {
      if (!res.writableEnded) cancellation.abort();
    };
    res.on('close', onClose);

    let requestCapture: BodyCapture | null = null;
    let responseCapture: BodyCapture | null = null;
    let responseHeaders: Record<string, string | string[] | undefined> = {};
    let translation: TranslationSource | null = null;
    const trace = hooks.tracer ? startTrace(hooks.tracer, request, call, requestLog) : null;
    const writer = new ClientWriter(res, request.id, () => {
      if (record.ttfbMs === null) {
        record.markFirstByte();
        trace?.firstByte();
      }
    }, (chunk) => responseCapture?.add(chunk), deps.writeStallMs);
    let permit: Permit | null = null;
    let retries: RetryRun | null = null;
    let finishInFlight: (() => void) | null = null;
    let upstreamTries: UpstreamTries | null = null;
    let sending: Attempt | null = null;

    try {
      const principal = request.principal ?? await authenticateNow(request, call.shape);
      record.principal = principal;
      if (principal.client && !record.client) record.client = principal.client;
      if (principal.extras) record.extras = { ...principal.extras, ...record.extras };
      if (observer.shouldCapture(principal.policy.spec.payloadLoggingEnabled, principal.relayKey.spec.payloadLoggingEnabled)) {
        const max = observer.payloadMaxBytes();
        requestCapture = new BodyCapture(max);
        requestCapture.add(call.body);
        responseCapture = new BodyCapture(max);
      }
      const limited = deps.rateLimiter.acquire(principal, sync.snapshot());
      if (limited) permit = await limited;
      const resolve = hooks.resolver ? pluginResolver : defaultResolver;
      const codec = hooks.codecs.get(call.shape);
      const snapshot = sync.snapshot();
      const requested = snapshot.modelBySlug(call.model) ?? snapshot.models.get(call.model);
      // The model's own list when it has one, else the policy's (never the requested model itself again).
      const own = requested?.spec.fallbacks;
      const chain = (own && own.length > 0 ? own : principal.policy.spec.fallbacks ?? []).filter((f) => f.modelId !== requested?.metadata.id);
      // A budget whose spend is not read yet is not 0: wait (bounded) for it; none to wait for on almost every request.
      const firstReads = deps.budgets?.firstReads(principal, [requested?.metadata.id ?? null, ...chain.map((f) => f.modelId)]);
      if (firstReads) await firstReads;
      const standardSpeed = standardSpeedFor(principal.policy.spec.fastModes, codec, call, record.extras);
      if (standardSpeed) writer.fastMode = 'standard';
      // A premium mode the request keeps is priced by its own figure, which a budget that refuses what it cannot count needs.
      const modifier = deps.budgets && !standardSpeed ? codec?.fastMode?.(call)?.value : undefined;
      const overBudget = deps.budgets?.refusal(principal, requested?.metadata.id ?? null, modifier);
      if (overBudget) throw overBudget;
      // Proxy mode: the hosts the caller's own credential may reach, the requested model's (proxy-scope.ts).
      const credentialHosts = principal.passthroughCredential && chain.length > 0 ? proxyHostsOf(resolve, principal, call.model, call.shape) : null;
      // A fallback that does not exist (deleted since), that the key may not use, that a budget refuses,
      // or (proxy mode) on none of the requested model's hosts is never tried.
      const skips = chain.map((entry): FallbackSkip | null => {
        const model = snapshot.models.get(entry.modelId);
        if (model === undefined) return 'not_found';
        if (!policyGrants(principal.policy, model.metadata.id)) return 'not_granted';
        if (deps.budgets?.refusal(principal, model.metadata.id, modifier)) return 'budget';
        return credentialHosts && !reachesAny(resolve, principal, model.metadata.slug, call.shape, credentialHosts) ? 'other_host' : null;
      });
      const usable = skips.map((skip) => skip === null);
      const tried: ModelAttempt[] = [];
      let condition: FallbackCondition | null = null;
      let served = false;
      // The model's retry policy, else its key's policy's (retry-policy.ts); none = one try per binding.
      const retryPolicy = requested?.spec.retry ?? principal.policy.spec.retry;
      retries = retryPolicy ? new RetryRun(retryPolicy, () => writer.isCommitted) : NO_RETRY_POLICY;
      // Set when the policy's maxAttempts is spent: nothing more is tried.
      let stopped = false;
      upstreamTries = new UpstreamTries();

      // What a passed-through answer makes upstream is recorded as its caller's, and a Responses
      // conversation kept when the model may fail over to another vendor.
      const forwarded = codec?.state || codec?.ownership
        ? await ForwardedCapture.open(codec, call, principal, requestLog, !!codec.state?.forward && mixesShapes(requested, chain.length > 0, call.shape, snapshot, hooks.adapters)) : null;
      // Whether what the request names is another owner's: asked once, before the first passthrough.
      let ownership: Promise<void> | null | undefined;
      const attempt = new Attempt(call, request, principal, record, writer, cancellation, holdBounds, health, requestLog, deps.upstream, trace);
      attempt.retry = retries;
      attempt.standardSpeed = standardSpeed;
      attempt.meter = deps.meter ?? null;
      attempt.hostKeyUse = deps.hostKeyLastUsed ?? null;
      finishInFlight = () => attempt.finishInFlight();
      sending = attempt;
      for (let step = -1; step < chain.length && !served && !stopped; step++) {
        const entry = step < 0 ? null : chain[step];
        if (entry) {
          if (!takes(entry, condition!)) continue;
          if (!usable[step]) {
            const slug = snapshot.models.get(entry.modelId)?.metadata.slug ?? entry.modelId;
            log.warn({ model: call.model, fallback: slug, requestId: request.id, reason: skips[step] }, 'fallback skipped: missing, not granted by the relay key\'s policy, refused by a budget, or (proxy mode) on another host');
            tried.push({ model: slug, outcome: skips[step]! });
            continue;
          }
          inferenceMetrics.fallback(condition!);
        }
        // Whether a later model may still answer: then this one's last failure is not the client's answer.
        const more = usable.some((u, j) => u && j > step);
        // A fallback by its slug, as a client would name it (a plugin's resolver sees the same names).
        const name = entry ? snapshot.models.get(entry.modelId)!.metadata.slug : call.model;
        const takesLater = (c: FallbackCondition): boolean => chain.some((e, j) => j > step && usable[j] && takes(e, c));
        // A prompt clearly over this model's window goes straight to a later fallback (context-window.ts).
        const candidate = entry ? snapshot.models.get(entry.modelId) : requested;
        if (takesLater('context_window_exceeded') && clearlyOverWindow(candidate, call.body.length)) {
          condition = 'context_window_exceeded';
          tried.push({ model: candidate?.metadata.slug ?? name, outcome: condition });
          continue;
        }
        let routes: Route[];
        try {
          routes = resolve(principal, name, { shape: call.shape });
          if (entry && credentialHosts) {
            routes = withinHosts(routes, credentialHosts);
            if (routes.length === 0) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The fallback \`${name}\` has no binding on the requested model's hosts, where proxy mode sends the caller's credential.`);
          }
        } catch (err) {
          const refusal = conditionOfRefusal(err) ?? (entry ? 'no_healthy_binding' : null);
          if (refusal === null || !more) throw err;
          condition = refusal;
          tried.push({ model: snapshot.models.get(name)?.metadata.slug ?? name, outcome: refusal });
          continue;
        }
        const servedSlug = routes[0].model.metadata.slug;
        // Whichever of the model's bindings answers: one that passes through decides what is refused.
        if (routes.some((r) => r.shapes.includes(call.shape))) {
          codec?.checkPassthrough?.(call);
          ownership ??= codec?.ownership?.check(call, principal) ?? null;
          if (ownership) await ownership;
        }
        if (routes.some((r) => !r.shapes.includes(call.shape)) && !translation) {
          if (!codec) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${name}\` is not served in this API's shape.`);
          translation = await TranslationSource.decode(codec, call, principal);
        }
        attempt.servedModel = entry ? servedSlug : null;
        attempt.lastFailure = null;
        attempt.fallbackReason = null;
        attempt.fallbackTakes = takesLater;
        // Near the window, the vendor's count endpoint says exactly whether the prompt fits (exact-count.ts).
        if (takesLater('context_window_exceeded') && nearWindow(candidate, call.body.length)
          && await countedOverWindow(attempt, routes[0], credentials, codec, translation, effectiveWindow(candidate)!.tokens, missingCounters)) {
          condition = 'context_window_exceeded';
          tried.push({ model: servedSlug, outcome: condition });
          continue;
        }
        writer.servedModel = servedSlug;
        for (let i = 0; i < routes.length && !stopped; i++) {
          const route = routes[i];
          const lastRoute = i === routes.length - 1 && !more;
          attempt.isLast = lastRoute;
          let credential: string | null = null;
          let probe = ADMITTED;
          if (route.hostKey) {
            const resolved = credentials.resolve(route.hostKey);
            if ('error' in resolved) {
              health.reportUnusable(route.hostKey, resolved.error);
              requestLog.warn({ hostKey: route.hostKey.metadata.slug, reason: resolved.error }, 'host key unusable');
              if (attempt.isLast) throw new RelayError('RELAY_ERR_NO_HEALTHY_KEY', `No usable host key for the model \`${call.model}\`: host key \`${route.hostKey.metadata.slug}\` of host \`${route.host.metadata.slug}\` cannot be used (Relay's log says why).`);
              inferenceMetrics.failover('host_key_unusable');
              upstreamTries.add({ model: servedSlug, host: route.host.metadata.slug, outcome: 'host_key_unusable' });
              attempt.lastFailure = 'auth';
              continue;
            }
            // A half-open circuit lets one request through: this one, unless another already is.
            probe = health.admit(route.hostKey);
            if (probe === REFUSED) {
              if (attempt.isLast) throw circuitRefusal(call.model, route.hostKey, health);
              inferenceMetrics.failover('circuit_open');
              upstreamTries.add({ model: servedSlug, host: route.host.metadata.slug, outcome: 'circuit_open' });
              attempt.lastFailure = 'auth';
              continue;
            }
            credential = resolved.value;
          }
          let result: AttemptResult = { kind: 'retry' };
          // One try, or more of the same binding under a retry policy (retry-policy.ts).
          for (let tries = 1; retries.mayTry(record.attempts); tries++) {
            retries.checkDeadline();
            // Its failure is the client's answer when nothing may follow it.
            attempt.isLast = (lastRoute && tries >= retries.perBinding) || retries.lastAllowed(record.attempts);
            const sent = record.attempts;
            attempt.hedge = tries === 1 ? planHedge(routes, i, credentials, health, deps.meter ?? null) : null;
            try {
              result = route.shapes.includes(call.shape)
                ? await passthrough(attempt, route, credential, forwarded, codec ?? null)
                : await translate(attempt, route, credential, codec!, translation!);
              attempt.endAttempt(result.kind === 'retry' && !attempt.isLast ? record.lastFailure ?? 'other' : null);
            } catch (err) {
              attempt.endAttempt(null, err instanceof RelayError ? err.code : err instanceof ClientGone ? 'client_aborted' : 'internal');
              // The last try's failure is the client's answer: the record still lists it.
              if (!(err instanceof ClientGone) && record.attempts !== sent) {
                const outcome = err instanceof RelayError && err.code === 'RELAY_ERR_RETRY_DEADLINE' ? 'deadline' : attempt.lastFailure ?? 'failed';
                upstreamTries.add({ model: servedSlug, host: route.host.metadata.slug, outcome });
              }
              throw err;
            } finally {
              // A probe answered with a success or failure already closed or reopened the circuit.
              if (probe > ADMITTED) health.releaseProbe(route.hostKey!, probe);
            }
            if (record.attempts !== sent) {
              const outcome = result.kind === 'done' ? 'answered' : result.kind === 'next_model' ? attempt.fallbackReason! : record.lastFailure ?? attempt.lastFailure ?? 'failed';
              const status = result.kind === 'done' ? record.status : attempt.lastStatus;
              upstreamTries.add({ model: servedSlug, host: route.host.metadata.slug, outcome, ...(status ? { status } : {}) });
            }
            if (result.kind !== 'retry' || record.attempts === sent) break;
            const failure = attempt.lastFailure as FailureKind | null;
            const wait = retries.sameBindingDelay(tries, failure, attempt.lastRetryAfterMs);
            // A 429 is waited out on purpose; a key whose circuit opened meanwhile is left.
            if (wait === null || (route.hostKey && failure !== 'rate_limit' && !health.isAvailable(route.hostKey))) break;
            upstreamTries.waited(wait);
            routingMetrics.retry(servedSlug, failure ?? 'other');
            await retries.sleep(wait, cancellation.signal);
            if (cancellation.aborted) throw new ClientGone();
            probe = route.hostKey ? health.admit(route.hostKey) : ADMITTED;
            if (probe === REFUSED) break;
          }
          if (result.kind === 'retry' && !retries.mayTry(record.attempts)) stopped = true;
          if (result.kind === 'done') {
            served = true;
            break;
          }
          if (result.kind === 'next_model') break;
          if (!attempt.isLast) inferenceMetrics.failover(record.lastFailure ?? 'other');
          record.lastFailure = null;
        }
        if (served) {
          tried.push({ model: servedSlug });
        } else {
          condition = attempt.fallbackReason ?? conditionOfFailure(attempt.lastFailure ?? 'server');
          tried.push({ model: servedSlug, outcome: condition });
          if (more) log.warn({ model: servedSlug, reason: condition, requestId: request.id }, 'every binding failed; trying the next fallback');
        }
      }
      if (chain.length > 0) {
        for (const m of tried) if (m.outcome) routingMetrics.fallback(m.model, m.outcome);
        record.extras.relay_served_model = served ? tried[tried.length - 1].model : '';
        record.extras.relay_model_attempts = JSON.stringify(tried);
      }
      if (!writer.isCommitted && !res.headersSent) {
        if ((chain.length > 0 || retries.policy) && condition) throw exhausted(call.model, condition, attempt.lastRetryAfterMs);
        throw new RelayError('RELAY_ERR_UPSTREAM_UNREACHABLE', `No upstream could serve the model \`${call.model}\`.`);
      }
    } catch (err) {
      if (err instanceof ClientGone || cancellation.aborted) {
        record.clientAborted = true;
        record.errorCode = 'client_aborted';
        if (!record.status) record.status = 499;
      } else {
        const relayErr = toRelayError(err);
        if (relayErr.status >= 500 && relayErr.code === 'RELAY_ERR_INTERNAL') requestLog.error({ err }, 'inference request failed');
        record.errorCode = relayErr.code;
        record.refusedKey = refusedRelayKeyOf(relayErr);
        if (writer.isCommitted) {
          writer.cut();
        } else {
          record.status = relayErr.status;
          const rendered = renderError(call.errorShape ?? call.shape, relayErr);
          const text = JSON.stringify(rendered.body);
          responseCapture?.add(text);
          if (!res.destroyed) responseHeaders = writeJson(res, request.id, rendered.status, rendered.headers, text);
        }
      }
    } finally {
      retries?.close();
      finishInFlight?.();
      const triesExtra = upstreamTries?.toExtra();
      if (triesExtra) record.extras.relay_attempts = triesExtra;
      res.off('close', onClose);
      if (cancellation.aborted && writer.isCommitted && !res.writableEnded) record.clientAborted = true;
      if (writer.stalled) {
        record.errorCode = 'client_stalled';
        requestLog.warn({ stallMs: deps.writeStallMs }, 'the client stopped reading its answer; the answer and its upstream call were cut');
      }
      const reported = tokensOf(record.usage);
      permit?.release(reported);
      // The answer has ended: counting or estimating its usage delays only the record.
      const resend = sending?.resend;
      const unreadable = resend ? unreadableParts(record) : [];
      if (resend && (answeredWithoutUsage(record) || unreadable.length > 0)) {
        record.markEnd();
        await meterUnreported(record, missingCounters, resend, canonicalPrompt(record.route!, call, hooks.codecs.get(call.shape), translation), unreadable.length > 0 ? unreadable : undefined);
      } else if (endedEarlyWithUsage(record)) {
        raiseOutputToSeen(record);
      }
      // An estimate counts against tokens per minute as reported usage does.
      if (permit) permit.countTokens(tokensOf(record.usage) - reported);
      const snapshot = sync.snapshot();
      const event = record.toEvent(snapshot);
      countRequest(call.shape, event.status);
      duration.observe({ shape: call.shape }, event.latency_ms / 1000);
      inferenceMetrics.observe(record, event, call.shape);
      if (trace) endTrace(trace, event, requestLog);
      const payload = requestCapture && responseCapture
        ? buildCapturedPayload({ requestId: request.id, request: requestCapture, response: responseCapture, requestHeaders: request.headers, responseHeaders: writer.isCommitted ? writer.sentHeaders : responseHeaders })
        : null;
      observer.record(event, payload);
    }
  }

  function recordRejected(
    requestId: string, json: unknown, shape: ShapeId, err: RelayError, principal: Principal | null = null, headers?: InboundHttpRequest['headers'],
  ): void {
    const body = json !== null && typeof json === 'object' ? json as { model?: unknown; stream?: unknown } : undefined;
    const model = typeof body?.model === 'string' ? body.model : null;
    const record = new RequestRecord(requestId, shape, model, body?.stream === true);
    record.principal = principal;
    record.refusedKey = refusedRelayKeyOf(err);
    const attribution: Attribution | undefined = (headers && knownClientAttribution(headers)) ?? (principal?.client ? { client: principal.client } : undefined);
    if (attribution) record.client = attribution.client ?? null;
    record.extras = Object.assign({}, principal?.extras, attribution?.extras);
    if (headers) record.clientRequestId = clientRequestIdOf(headers);
    record.status = err.status;
    record.errorCode = err.code;
    countRequest(shape, err.status);
    const event = record.toEvent(sync.snapshot());
    inferenceMetrics.observe(record, event, shape);
    observer.record(event, null);
  }

  return {
    handle,
    authenticate,
    authenticateInference: authenticateNow,
    sendError,
    recordRejected,
    recordAnswered(request, reply) {
      observer.record(answered.toEvent(request, reply, sync.snapshot()), null);
    },
    reachableModels(principal: Principal): Model[] {
      return reachableModels(principal, sync.snapshot(), resolverDeps);
    },
  };
}

/** The tokens a request used, as far as its record knows. */
function tokensOf(usage: { input_tokens: number; output_tokens: number } | null): number {
  return usage ? usage.input_tokens + usage.output_tokens : 0;
}
