// The inference listener's fast lane: POSTs to the endpoints that wire plugins mount with
// mountInferenceRoute are served before Fastify sees them, from the lean server's own reading of
// the socket (lean/lean-server.ts; routeFor, admit, serveBody) or from node:http (tryServe, when
// the lean server is off or has handed the connection to Node); every other request (health, model
// lists, unknown paths, other methods) goes on to Fastify.
//
// Measured reason: Fastify's per-request work (routing, request/reply objects, hooks, content-type
// parsing) cost ~12 us of CPU per request, about 10% of Relay's whole per-request budget at 16
// connections (a bare proxy: 16.6k req/s behind Fastify, 21k req/s on node:http).
//
// The lane does what Fastify did for these routes, and nothing more: a request id echoed as
// x-request-id, 503 while shutting down, 415 for a body that is not JSON, the body limit (413),
// the JSON check (400; the body is read in place, see inference-body.ts), the model/stream checks;
// refusals are rendered in the route's shape and recorded like any other request, after the relay
// key is checked (pipeline.refuse: a caller without a valid key gets the 401 whatever else is
// wrong). Fastify hooks on the inference listener do not run for them.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { RelayError } from '../errors.ts';
import type { ShapeId } from '../hooks.ts';
import type { InboundHttpRequest } from '../hooks.ts';
import { BodyBytes } from './body-bytes.ts';
import type { ClientResponse } from './client-response.ts';
import { checkInferenceBody, isJsonContentType, parseJsonBody, scanInferenceBody, unsupportedMediaType, type InferenceBody } from './inference-body.ts';

export interface LaneRoute {
  /** Shape whose codec renders this route's errors. */
  errorShape: ShapeId;
  serve(request: InboundHttpRequest, res: ClientResponse, body: InferenceBody, raw: BodyBytes): Promise<void>;
}

export interface LaneDeps {
  bodyLimit: number;
  log: Logger;
  /** Renders a refused request in `shape`, sends it with x-request-id, and records it (`json`: the body, if parsed). */
  refuse(request: InboundHttpRequest, res: ClientResponse, shape: ShapeId, err: RelayError, json: unknown): void;
}

export class InferenceLane {
  private readonly routes = new Map<string, LaneRoute>();
  /** Set when shutdown begins: new requests get 503 and the connection closes. */
  closing = false;

  constructor(private readonly deps: LaneDeps) {}

  add(path: string, route: LaneRoute): void {
    if (this.routes.has(path)) throw new Error(`inference route POST ${path} is mounted twice`);
    this.routes.set(path, route);
  }

  /** The lane route for `method` and `url`, or undefined (the request is not the lane's). */
  routeFor(method: string | undefined, url: string): LaneRoute | undefined {
    if (method !== 'POST') return undefined;
    const q = url.indexOf('?');
    return this.routes.get(q < 0 ? url : url.slice(0, q));
  }

  /** Serves the request when it is a POST to a lane route; false hands it on to Fastify. */
  tryServe(req: IncomingMessage, res: ClientResponse): boolean {
    const url = req.url ?? '/';
    const route = this.routeFor(req.method, url);
    if (!route) return false;
    const request = this.request(url, req.headers);
    if (!this.admit(request, res, route)) return true;
    readBody(req, this.deps.bodyLimit, (err, raw) => {
      if (err) {
        if (err instanceof RelayError) {
          res.setHeader('connection', 'close');
          this.deps.refuse(request, res, route.errorShape, err, undefined);
        }
        return; // the client went away mid-body: nothing was accepted
      }
      this.serveBody(request, res, route, raw!);
    });
    return true;
  }

  /** The request as routes see it (x-request-id goes out with the answer's head; the pipeline and refuse() write it). */
  request(url: string, headers: IncomingHttpHeaders): InboundHttpRequest {
    return { id: randomUUID(), method: 'POST', url, headers };
  }

  /**
   * The checks that need only the head: false when the request was refused (503 while shutting
   * down, 415, 413 for a declared length over the limit; the last two close the connection).
   */
  admit(request: InboundHttpRequest, res: ClientResponse, route: LaneRoute): boolean {
    const deps = this.deps;
    if (this.closing) {
      res.setHeader('connection', 'close');
      deps.refuse(request, res, route.errorShape, new RelayError('RELAY_ERR_SHUTTING_DOWN', 'Relay is shutting down; retry on another instance.'), undefined);
      return false;
    }
    if (!isJsonContentType(request.headers['content-type'])) {
      deps.refuse(request, res, route.errorShape, unsupportedMediaType(), undefined);
      return false;
    }
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > deps.bodyLimit) {
      res.setHeader('connection', 'close');
      deps.refuse(request, res, route.errorShape, tooLarge(deps.bodyLimit), undefined);
      return false;
    }
    return true;
  }

  /** Serves a request whose whole body has been read. */
  serveBody(request: InboundHttpRequest, res: ClientResponse, route: LaneRoute, raw: BodyBytes): void {
    const deps = this.deps;
    let json: unknown;
    // Read in place when the body is well formed; otherwise the whole parse names what is wrong.
    let body = scanInferenceBody(raw);
    if (body === null) {
      try {
        json = parseJsonBody(raw.joined());
        body = checkInferenceBody(json);
      } catch (e) {
        deps.refuse(request, res, route.errorShape, e as RelayError, json);
        return;
      }
    }
    let served: Promise<void>;
    try {
      served = route.serve(request, res, body, raw);
    } catch (e) {
      served = Promise.reject(e); // thrown before the route's first await (a plugin's attribute hook, say)
    }
    served.catch((e: unknown) => {
      deps.log.error({ err: e }, 'inference lane: unexpected failure');
      if (!res.headersSent) deps.refuse(request, res, route.errorShape, new RelayError('RELAY_ERR_INTERNAL', 'An unexpected error inside Relay.'), json);
      else res.destroy();
    });
  }
}

function tooLarge(limit: number): RelayError {
  return new RelayError('RELAY_ERR_BODY_TOO_LARGE', `request body is larger than ${limit} bytes`);
}

/** Reads the whole body up to `limit` bytes, as the chunks it came in; a RelayError past it, a plain Error if the client left. */
function readBody(req: IncomingMessage, limit: number, done: (err: Error | null, body?: BodyBytes) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: BodyBytes) => {
    if (finished) return;
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onClose);
    req.off('close', onClose);
    done(err, body);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      finish(tooLarge(limit));
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = () => finish(null, new BodyBytes(chunks, size));
  const onClose = () => finish(new Error('client closed the request before its body ended'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onClose);
  req.on('close', onClose);
}
