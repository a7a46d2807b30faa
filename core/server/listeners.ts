// The two Fastify listeners with the options both share: request ids, body limits,
// error rendering, and OpenAPI generation registered before any route.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { RelayConfig } from '../config/schema.ts';
import { RelayError } from '../errors.ts';
import { toRelayError } from './errors.ts';
import { parseJsonBody } from '../http/inference-body.ts';
import type { InferenceLane } from '../http/inference-lane.ts';
import { installLeanServer } from '../http/lean/lean-server.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body bytes as received (inference listener, JSON routes). */
    rawBody?: Buffer;
  }
  interface FastifyContextConfig {
    /** Wire shape of an inference route; errors there render in this shape. */
    shape?: string;
    /** The pipeline records this route's requests itself (inference endpoints; see answered-requests.ts). */
    recordedByPipeline?: boolean;
    /** Control routes that need no credentials. */
    public?: boolean;
  }
}

export type ErrorRenderer = (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply, err: RelayError) => void;

export interface ListenerOptions {
  config: RelayConfig;
  log: Logger;
  title: string;
  version: string;
  renderError: ErrorRenderer;
  /** Keep the raw body beside the parsed JSON (inference listener). */
  keepRawBody: boolean;
  securitySchemes?: Record<string, unknown>;
  /** Requests this lane serves never reach Fastify (the inference listener's hot endpoints). */
  lane?: InferenceLane;
}

function frameworkError(err: { code?: string }): RelayError {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return new RelayError('RELAY_ERR_BAD_REQUEST', 'a path segment of this URL is longer than any id or slug (100 characters at most)');
  if (err.code === 'FST_ERR_BAD_URL') return new RelayError('RELAY_ERR_BAD_REQUEST', 'the URL is not valid: a percent-encoded part does not decode');
  return toRelayError(err);
}

/**
 * Node's HTTP parser rejected the request (headers too large, a malformed request line) before
 * any route could run: answer with Relay's error body, then close the connection.
 */
function answerMalformedConnection(err: Error & { code?: string }, socket: import('node:net').Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const error = err.code === 'HPE_HEADER_OVERFLOW'
    ? new RelayError('RELAY_ERR_HEADERS_TOO_LARGE', 'request headers are larger than the server accepts')
    : new RelayError('RELAY_ERR_BAD_REQUEST', 'the request is not valid HTTP');
  const body = JSON.stringify({ error: error.toBody() });
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

/**
 * node:http server whose requests go to the lane first, then to Fastify (as Fastify would set it
 * up); with `lean`, the lean server reads connections before Node's does (core/http/lean).
 */
function laneServerFactory(lane: InferenceLane, lean: boolean) {
  return (fastifyHandler: (req: IncomingMessage, res: ServerResponse) => void, opts: { keepAliveTimeout?: number; requestTimeout?: number; connectionTimeout?: number; maxRequestsPerSocket?: number }) => {
    const server = createServer((req, res) => {
      if (!lane.tryServe(req, res)) fastifyHandler(req, res);
    });
    if (opts.keepAliveTimeout !== undefined) server.keepAliveTimeout = opts.keepAliveTimeout;
    if (opts.requestTimeout !== undefined) server.requestTimeout = opts.requestTimeout;
    if (opts.connectionTimeout) server.setTimeout(opts.connectionTimeout);
    if (opts.maxRequestsPerSocket) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
    if (lean) installLeanServer(server, lane);
    return server;
  };
}

export async function createListener(options: ListenerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.log as unknown as import('fastify').FastifyBaseLogger,
    // Per-request access logs cost ~15% of throughput on the hot path; usage events carry it.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.config.server.bodyLimitBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    trustProxy: options.config.server.trustProxy,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Fastify's 10 s default is too short for a plugin that loads a native engine (log-clickhouse's
    // embedded chdb took over 10 s on a loaded 2-core machine) or waits for a slow backend.
    pluginTimeout: 120_000,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    // URLs the router rejects before any route or hook runs (a bad percent-encoding, a path
    // parameter over maxParamLength) get Relay's JSON error and x-request-id, not Fastify's body.
    clientErrorHandler: answerMalformedConnection,
    ...(options.lane ? { serverFactory: laneServerFactory(options.lane, options.config.server.leanHttp) } : {}),
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      options.renderError(request, reply, frameworkError(err));
    },
  });

  if (!options.keepRawBody) {
    // An empty body sent with content-type application/json is no body, not a 400: clients and
    // shell helpers send the header on every request, DELETE and POST actions (rotate, reload)
    // included. Routes that need a body still refuse its absence through their schema.
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      if ((body as string).trim() === '') return done(null, undefined);
      void parseJson(request, body as string, done); // calls done itself; returns nothing to wait for
    });
  }

  if (options.keepRawBody) {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const raw = body as Buffer;
      request.rawBody = raw;
      try {
        done(null, parseJsonBody(raw));
      } catch (err) {
        done(err as RelayError);
      }
    });
  }

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    const relayErr = toRelayError(err);
    if (relayErr.status >= 500) request.log.error({ err, code: relayErr.code }, 'request failed');
    options.renderError(request, reply, relayErr);
  });

  app.setNotFoundHandler((request, reply) => {
    options.renderError(request, reply, new RelayError('RELAY_ERR_NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, version: options.version },
      components: { securitySchemes: (options.securitySchemes ?? {}) as never },
    },
  });
  return app as unknown as FastifyInstance;
}
