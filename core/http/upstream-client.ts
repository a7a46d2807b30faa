// The HTTP client every upstream call goes through: undici, one set of connection pools per Relay
// instance, HTTP_PROXY/HTTPS_PROXY/NO_PROXY honoured (EnvHttpProxyAgent). A host may cap its
// connections and offer HTTP/2; hosts with the same settings share one agent (and so one pool per
// origin). Waiting for a free connection counts against the host's timeout, like connecting and
// waiting for the head, so a saturated origin fails over like a slow one.
import { EventEmitter } from 'node:events';
import { Agent, Dispatcher, EnvHttpProxyAgent, errors } from 'undici';
import type { UpstreamResponse } from '../hooks.ts';
import type { Cancellation } from './cancellation.ts';

export interface UpstreamClientOptions {
  /** Connections per origin for hosts that do not set their own. */
  maxConnectionsPerOrigin: number;
  connectTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** How one host wants its connections. */
export interface HostTransport {
  maxConnections?: number;
  http2?: boolean;
}

export interface SendOptions {
  method?: 'POST' | 'GET' | 'HEAD';
  headers: Record<string, string>;
  body?: Buffer | string;
  /** Aborts the request (the client went away). */
  signal?: AbortSignal;
  /** The same as `signal`, without making an AbortSignal (the kernel's requests); used instead of it. */
  cancellation?: Cancellation;
  /** Bound on the wait for the response head, from the call on (queue, connect, answer), and between body chunks (ms). */
  timeoutMs: number;
  transport?: HostTransport;
}

/** One origin's connection pool at this moment. */
export interface OriginConnections {
  /** Connections carrying a request. */
  inUse: number;
  /** Requests waiting for a connection. */
  queued: number;
}

interface ClientOrPoolStats {
  connected?: number;
  free?: number;
  running?: number;
  pending?: number;
  queued?: number;
}

/**
 * The undici Agents a dispatcher is or holds: an EnvHttpProxyAgent holds a direct Agent and a
 * ProxyAgent, which holds its own; neither exposes stats of its own.
 */
function innerAgents(dispatcher: Dispatcher, depth = 0): Agent[] {
  if (dispatcher instanceof Agent) return [dispatcher];
  if (depth > 2) return [];
  const found = new Set<Agent>();
  for (const symbol of Object.getOwnPropertySymbols(dispatcher)) {
    const value = (dispatcher as unknown as Record<symbol, unknown>)[symbol];
    if (value instanceof Agent) found.add(value);
    else if (value instanceof Dispatcher) for (const agent of innerAgents(value, depth + 1)) found.add(agent);
  }
  return [...found];
}

/** The upstream did not send its head within the host's timeout. */
export class UpstreamTimeoutError extends Error {
  readonly code = 'RELAY_UPSTREAM_HEADERS_TIMEOUT';
}

/** The upstream's answer is not one an HTTP client may accept. */
export class UpstreamProtocolError extends Error {
  readonly code = 'RELAY_UPSTREAM_BAD_RESPONSE';
}

/** The upstream answered with a redirect: never followed (it would carry the host key elsewhere), never handed to the caller. */
export class UpstreamRedirectError extends Error {
  readonly code = 'RELAY_UPSTREAM_REDIRECT';

  constructor(readonly status: number) {
    super(`the upstream answered HTTP ${status}, a redirect, which Relay does not follow (the host's baseUrl may be out of date)`);
  }
}

const ignore = (): void => {};

/** Whether the environment names an egress proxy (the variables EnvHttpProxyAgent reads). */
function proxyConfigured(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.HTTP_PROXY || env.http_proxy || env.HTTPS_PROXY || env.https_proxy);
}

/** Parsed upstream URLs kept at most (hosts times endpoints; a query string per request would not repeat). */
const MAX_KEPT_TARGETS = 1024;

/** Calls `onAbort` when the caller aborts (at once if it has); returns what stops listening. */
function listenForAbort(options: SendOptions, onAbort: (reason: unknown) => void): () => void {
  if (options.cancellation) return options.cancellation.onAbort(onAbort);
  const signal = options.signal;
  if (!signal) return ignore;
  if (signal.aborted) {
    onAbort(signal.reason);
    return ignore;
  }
  const listener = () => onAbort(signal.reason);
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

/**
 * One call: what aborts it (its deadline or its caller; undici takes an EventEmitter as a request's
 * signal) and the one promise it settles. undici aborts a request waiting for a connection only
 * once it gets one, so the deadline and the caller settle the promise themselves, and a request
 * still queued is dropped unsent when its turn comes.
 */
class UpstreamCall extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private stopListening: () => void = ignore;

  constructor(private readonly resolve: (res: UpstreamResponse) => void, private readonly reject: (err: unknown) => void, options: SendOptions) {
    super();
    this.timer = setTimeout(() => this.abort(new UpstreamTimeoutError('the upstream did not answer in time')), options.timeoutMs);
    this.stopListening = listenForAbort(options, (reason) => this.abort(reason ?? new errors.RequestAbortedError()));
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort', reason);
    this.fail(reason);
  }

  /** undici's callback: the head arrived, or the request failed. */
  readonly done = (err: Error | null, res?: Dispatcher.ResponseData): void => {
    clearTimeout(this.timer);
    if (err || !res) return this.fail(this.reason instanceof UpstreamTimeoutError ? this.reason : err);
    // A head that arrives after the call ended (its deadline, its caller): its body is nobody's, let its connection go.
    if (this.settled) return void res.body.destroy();
    const status = res.statusCode;
    if (status < 200 || status > 599 || (status >= 300 && status < 400)) {
      res.body.destroy();
      return this.fail(status >= 300 && status < 400
        ? new UpstreamRedirectError(status)
        : new UpstreamProtocolError(`the upstream answered with status ${status}, which is not an HTTP status`));
    }
    this.settled = true;
    // Errors reach the reader through its iterator; an unread body's error must not crash the process.
    res.body.on('error', ignore);
    // Once the body is over nothing is left to abort; a listener left behind ties this call and its
    // whole answer to the caller's cancellation or signal for as long as that lives (RESULTS.md).
    res.body.once('close', this.stopListening);
    // The caller still listens until the body closes: leaving mid-answer aborts the body.
    this.resolve({ status: res.statusCode, headers: res.headers, body: res.body });
  };

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.stopListening();
    this.reject(err);
  }
}

export class UpstreamClient {
  private readonly agents = new Map<string, Dispatcher>();
  private readonly targets = new Map<string, { origin: string; pathname: string; search: string }>();

  constructor(private readonly options: UpstreamClientOptions) {}

  /** Sends one request; resolves when the response head arrived. */
  send(url: string, options: SendOptions): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      const target = this.target(url); // a malformed URL throws here, which rejects the send
      const call = new UpstreamCall(resolve, reject, options);
      if (call.aborted) return;
      this.dispatcher(options.transport).request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: options.method ?? 'POST',
        headers: options.headers,
        body: options.body,
        signal: call,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      }, call.done);
    });
  }

  /** This client, telling `onStatus` the status of each answer it gets (the kernel watching calls an adapter makes). */
  observed(onStatus: (status: number) => void): UpstreamClient {
    const view = Object.create(this) as UpstreamClient;
    view.send = (url, options) => this.send(url, options).then((res) => {
      onStatus(res.status);
      return res;
    });
    return view;
  }

  /** Per origin, summed over the agents (hosts with other settings have their own): read at scrape time. */
  connectionStats(): Map<string, OriginConnections> {
    const out = new Map<string, OriginConnections>();
    for (const dispatcher of this.agents.values()) {
      for (const agent of innerAgents(dispatcher)) {
        for (const [origin, raw] of Object.entries(agent.stats as Record<string, ClientOrPoolStats>)) {
          // A pool counts free connections and queued requests; a single client (h2) running and pending ones.
          const inUse = raw.free !== undefined ? (raw.connected ?? 0) - raw.free : raw.running ?? 0;
          const queued = raw.queued ?? raw.pending ?? 0;
          const sum = out.get(origin) ?? { inUse: 0, queued: 0 };
          out.set(origin, { inUse: sum.inUse + inUse, queued: sum.queued + queued });
        }
      }
    }
    return out;
  }

  /** Origin and path of a URL, kept per URL: a gateway sends to the same few URLs on every request. */
  private target(url: string): { origin: string; pathname: string; search: string } {
    let target = this.targets.get(url);
    if (!target) {
      const parsed = new URL(url); // a malformed URL throws here, which rejects the send
      target = { origin: parsed.origin, pathname: parsed.pathname, search: parsed.search };
      if (this.targets.size >= MAX_KEPT_TARGETS) this.targets.clear();
      this.targets.set(url, target);
    }
    return target;
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.allSettled(agents.map((a) => a.close()));
  }

  private dispatcher(transport: HostTransport = {}): Dispatcher {
    const connections = transport.maxConnections ?? this.options.maxConnectionsPerOrigin;
    const allowH2 = transport.http2 === true;
    const key = `${connections}/${allowH2}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const settings = {
        connections,
        allowH2,
        pipelining: 1,
        keepAliveTimeout: this.options.keepAliveTimeoutMs,
        connect: { timeout: this.options.connectTimeoutMs },
      };
      // The proxy agent looks at NO_PROXY on every request; without a proxy there is nothing to look for.
      agent = proxyConfigured(process.env) ? new EnvHttpProxyAgent(settings) : new Agent(settings);
      this.agents.set(key, agent);
    }
    return agent;
  }
}
