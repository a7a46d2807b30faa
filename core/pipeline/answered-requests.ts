// Usage events for the requests that the inference listener's Fastify routes answer themselves:
// model lists, the HEAD probe, paths no route knows. SPEC: every request is logged. The POST
// inference endpoints are not recorded here: the pipeline records those (handle, refuse).
//
// What such a request did is noted as it runs (the principal when a route authenticates, the
// shape and error code when an error is rendered) and turned into a usage event once the answer is
// sent. The notes are keyed by the request object and die with it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { RelayKey } from '../catalog/kinds.ts';
import type { Principal, ShapeId, UsageEvent } from '../hooks.ts';
import { RequestRecord } from './request-record.ts';
import { knownClientAttribution } from '../attribution/known-clients.ts';

interface Note {
  principal: Principal | null;
  shape: ShapeId | null;
  errorCode: string | null;
  refusedKey: RelayKey | null;
}

/** Longest path kept in the event's `endpoint` extra for a request no route matched. */
const MAX_PATH_CHARS = 200;

export class AnsweredRequests {
  private readonly notes = new WeakMap<object, Note>();

  private note(request: object): Note {
    let note = this.notes.get(request);
    if (!note) this.notes.set(request, note = { principal: null, shape: null, errorCode: null, refusedKey: null });
    return note;
  }

  noteAuthenticated(request: object, principal: Principal): void {
    this.note(request).principal = principal;
  }

  /** `refusedKey`: the known relay key an authentication error refused, if any. */
  noteError(request: object, shape: ShapeId, code: string, refusedKey: RelayKey | null = null): void {
    const note = this.note(request);
    note.shape = shape;
    note.errorCode = code;
    note.refusedKey = refusedKey;
  }

  /**
   * The usage event of an answered request. `endpoint` names what was asked: the route's path
   * template when one matched, else the path as sent (without its query string, which may carry
   * anything), cut to 200 characters.
   */
  toEvent(request: FastifyRequest, reply: FastifyReply, snapshot: CatalogSnapshot): UsageEvent {
    const note = this.notes.get(request);
    const config = request.routeOptions.config;
    const shape = note?.shape ?? (config?.shape as ShapeId | undefined) ?? 'canonical';
    const record = new RequestRecord(request.id, shape, null, false, reply.elapsedTime);
    record.principal = note?.principal ?? null;
    record.refusedKey = note?.refusedKey ?? null;
    const known = knownClientAttribution(request.headers);
    record.client = known?.client ?? record.principal?.client ?? null;
    record.status = reply.statusCode;
    record.errorCode = note?.errorCode ?? null;
    record.clientAborted = !reply.raw.writableFinished;
    const path = request.routeOptions.url ?? request.url.split('?')[0]!.slice(0, MAX_PATH_CHARS);
    record.extras = { ...record.principal?.extras, ...known?.extras, endpoint: `${request.method} ${path}` };
    return record.toEvent(snapshot);
  }
}
