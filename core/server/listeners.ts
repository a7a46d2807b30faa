// The two Fastify listeners with the options both share: request ids, body limits,
// error rendering, and OpenAPI generation registered before any route.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import type { RelayConfig } from '../config/schema.ts';
import { RelayError } from '../errors.ts';
import type { Principal } from '../hooks.ts';
import { toRelayError } from './errors.ts';
import { installControlBodyParsers } from './control-body-parsers.ts';
import type { BodyGuard } from '../http/body-guard.ts';
import { recordRoutes, unroutedError } from './unrouted.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, once an inference route authenticated it from the headers. */
    principal?: Principal;
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
  /**
   * The inference listener: JSON bodies arrive as raw bytes (parsed by the pipeline only where it
   * must), under the guard's deadlines and memory bound, with the config's connection limits.
   */
  inference?: { bodyGuard: BodyGuard };
  securitySchemes?: Record<string, unknown>;
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
  // Garbage after a request whose answer is still going out (a stream, say): never write into that
  // answer; close the connection once it is finished.
  const inProgress = (socket as { _httpMessage?: import('node:http').ServerResponse | null })._httpMessage;
  if (inProgress && !inProgress.writableFinished) {
    inProgress.once('close', () => socket.destroy());
    return;
  }
  const error = err.code === 'HPE_HEADER_OVERFLOW'
    ? new RelayError('RELAY_ERR_HEADERS_TOO_LARGE', 'request headers are larger than the server accepts')
    : new RelayError('RELAY_ERR_BAD_REQUEST', 'the request is not valid HTTP');
  const body = JSON.stringify({ error: error.toBody() });
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
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
    ...(options.inference ? {
      // No pino child per request: the pipeline makes its own when a request logs (request-log.ts).
      childLoggerFactory: (logger: FastifyBaseLogger) => logger,
      keepAliveTimeout: options.config.server.keepAliveTimeoutMs,
      requestTimeout: options.config.server.bodyTimeoutMs + options.config.server.headersTimeoutMs,
      http: { headersTimeout: options.config.server.headersTimeoutMs },
    } : {}),
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id);
      options.renderError(request, reply, frameworkError(err));
    },
  });

  if (options.inference) {
    // Inference bodies are JSON and nothing else (415 otherwise), kept as the bytes received.
    const guard = options.inference.bodyGuard;
    app.removeAllContentTypeParsers();
    app.addHook('preParsing', (request, reply, payload, done) => {
      guard.track(request.raw, reply.raw);
      done(null, payload);
    });
    app.addContentTypeParser('application/json', (request, payload, done) => {
      guard.read(payload, request.routeOptions.bodyLimit ?? options.config.server.bodyLimitBytes, done);
    });
    app.server.maxConnections = options.config.server.maxConnections;
  } else {
    // JSON only; an empty body is no body, whatever its content-type (control-body-parsers.ts).
    installControlBodyParsers(app as unknown as FastifyInstance);
  }

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    const relayErr = toRelayError(err);
    if (relayErr.status >= 500) request.log.error({ err, code: relayErr.code, reqId: request.id }, 'request failed');
    options.renderError(request, reply, relayErr);
  });

  recordRoutes(app as unknown as FastifyInstance);
  app.setNotFoundHandler((request, reply) => {
    options.renderError(request, reply, unroutedError(app as unknown as FastifyInstance, request.method, request.url));
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
