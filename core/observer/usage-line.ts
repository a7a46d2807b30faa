// A usage event as one line of JSON, written as UTF-8 straight into the line arena: the same
// bytes as JSON.stringify(event) and a newline, with no string built on the way.
//
// Measured reasons. JSON.stringify took ~2.2 us for a bench event, and each call into it costs
// ~0.1-0.2 us before any work. The line built by hand as a string (0.4 us) then took as long again
// to be flattened and encoded into the arena: 0.89 us per bench event in all, against 0.65 us
// written as bytes here, and 1,201 scavenges per two million events against 17 (the string line
// left ~2 KB of garbage per event). What logging costs (npm run bench:logging, six pairs, both
// builds in the same hour, alternating): 4.1% and 3.4% of throughput against 6.0% and 5.2% for the
// string line; bench:compare of the two builds with logging on sees less than its noise (0.998, 0.985).
// Keys are copied as prepared bytes, a string that needs no escaping character by character, the
// twelve fields naming who asked and where it went are encoded once per relay key and route and
// copied while they stay the same, and integers and latencies (rounded to the microsecond) are
// written from their digits. JSON.stringify still writes whatever falls outside those cases.
import type { UsageEvent } from '../hooks.ts';
import { MAX_NUMBER_BYTES, NULL, ascii, maxStringBytes, putBoolean, putBytes, putNullableString, putNumber, putString } from './json-bytes.ts';
import type { LineArena } from './line-arena.ts';

const K_REQUEST_ID = ascii('{"request_id":');
const K_STARTED_AT = ascii(',"started_at":');
const K_FINISHED_AT = ascii(',"finished_at":');
const K_STATUS = ascii(',"status":');
const K_ERROR_CODE = ascii(',"error_code":');
const K_STREAM = ascii(',"stream":');
const K_INPUT_TOKENS = ascii(',"input_tokens":');
const K_OUTPUT_TOKENS = ascii(',"output_tokens":');
const K_CACHE_READ_TOKENS = ascii(',"cache_read_tokens":');
const K_CACHE_WRITE_TOKENS = ascii(',"cache_write_tokens":');
const K_REASONING_TOKENS = ascii(',"reasoning_tokens":');
const K_COST = ascii(',"cost":');
const K_CURRENCY = ascii(',"currency":');
const K_LATENCY_MS = ascii(',"latency_ms":');
const K_TTFB_MS = ascii(',"ttfb_ms":');
const K_ATTEMPTS = ascii(',"attempts":');
const K_CLIENT_ABORTED = ascii(',"client_aborted":');
const K_CLIENT = ascii(',"client":');
const K_EXTRAS = ascii(',"extras":');
const EMPTY_EXTRAS_AND_END = ascii('{}}\n');

const KEYS = [K_REQUEST_ID, K_STARTED_AT, K_FINISHED_AT, K_STATUS, K_ERROR_CODE, K_STREAM, K_INPUT_TOKENS, K_OUTPUT_TOKENS,
  K_CACHE_READ_TOKENS, K_CACHE_WRITE_TOKENS, K_REASONING_TOKENS, K_COST, K_CURRENCY, K_LATENCY_MS, K_TTFB_MS, K_ATTEMPTS,
  K_CLIENT_ABORTED, K_CLIENT, K_EXTRAS];
/** The keys, the closing brace and newline, and the eleven numbers and two booleans at their longest. */
const FIXED_BYTES = KEYS.reduce((n, key) => n + key.length, 0) + 2 + 13 * MAX_NUMBER_BYTES;

const stringBytes = (s: string | null): number => (s === null ? NULL.length : maxStringBytes(s.length));

/** The fields from relay_key_id to upstream_shape, in order: the same for every request of one key on one route. */
type RouteFields = Pick<UsageEvent, 'relay_key_id' | 'relay_key_prefix' | 'policy_id' | 'model_requested' | 'model_id' | 'model_slug'
  | 'host_id' | 'host_key_id' | 'provider_id' | 'upstream_model' | 'inbound_shape' | 'upstream_shape'>;

function sameRoute(a: RouteFields, b: RouteFields): boolean {
  return a.relay_key_id === b.relay_key_id && a.relay_key_prefix === b.relay_key_prefix && a.policy_id === b.policy_id
    && a.model_requested === b.model_requested && a.model_id === b.model_id && a.model_slug === b.model_slug
    && a.host_id === b.host_id && a.host_key_id === b.host_key_id && a.provider_id === b.provider_id
    && a.upstream_model === b.upstream_model && a.inbound_shape === b.inbound_shape && a.upstream_shape === b.upstream_shape;
}

function routeBytes(e: RouteFields): Buffer {
  const json = JSON.stringify;
  return Buffer.from(',"relay_key_id":' + json(e.relay_key_id) + ',"relay_key_prefix":' + json(e.relay_key_prefix)
    + ',"policy_id":' + json(e.policy_id) + ',"model_requested":' + json(e.model_requested)
    + ',"model_id":' + json(e.model_id) + ',"model_slug":' + json(e.model_slug)
    + ',"host_id":' + json(e.host_id) + ',"host_key_id":' + json(e.host_key_id)
    + ',"provider_id":' + json(e.provider_id) + ',"upstream_model":' + json(e.upstream_model)
    + ',"inbound_shape":' + json(e.inbound_shape) + ',"upstream_shape":' + json(e.upstream_shape), 'utf8');
}

interface CachedRoute {
  fields: RouteFields;
  bytes: Buffer;
}

/** Routes kept, at most; the map starts over when full. */
const MAX_CACHED_ROUTES = 1024;

/**
 * The bytes extras take at most when every member is an own string (written member by member),
 * or -1 when one is not (JSON.stringify writes them then).
 */
function plainExtrasBytes(extras: Record<string, string>): number {
  let bytes = 2;
  for (const key in extras) {
    const value = extras[key];
    if (!Object.hasOwn(extras, key) || typeof value !== 'string') return -1;
    bytes += maxStringBytes(key.length) + maxStringBytes(value.length) + 2;
  }
  return bytes;
}

function putPlainExtras(buf: Buffer, pos: number, extras: Record<string, string>): number {
  let separator = 0x7b; // {
  for (const key in extras) {
    buf[pos++] = separator;
    pos = putString(buf, pos, key);
    buf[pos++] = 0x3a; // :
    pos = putString(buf, pos, extras[key]!);
    separator = 0x2c; // ,
  }
  buf[pos++] = 0x7d; // }
  return pos;
}

/** Writes usage events as JSON lines; keeps the route bytes it wrote (one instance per lane). */
export class UsageLineEncoder {
  /** By relay key, host key (or host) and model asked for; checked field by field on every use. */
  private readonly routes = new Map<string, CachedRoute>();
  private last: CachedRoute | null = null;

  private route(e: UsageEvent): Buffer {
    const last = this.last;
    if (last !== null && sameRoute(last.fields, e)) return last.bytes;
    const key = (e.relay_key_id ?? '') + '\n' + (e.host_key_id ?? e.host_id ?? '') + '\n' + (e.model_requested ?? '');
    const cached = this.routes.get(key);
    if (cached && sameRoute(cached.fields, e)) {
      this.last = cached;
      return cached.bytes;
    }
    const fields: RouteFields = {
      relay_key_id: e.relay_key_id, relay_key_prefix: e.relay_key_prefix, policy_id: e.policy_id, model_requested: e.model_requested,
      model_id: e.model_id, model_slug: e.model_slug, host_id: e.host_id, host_key_id: e.host_key_id, provider_id: e.provider_id,
      upstream_model: e.upstream_model, inbound_shape: e.inbound_shape, upstream_shape: e.upstream_shape,
    };
    const route = { fields, bytes: routeBytes(fields) };
    if (this.routes.size >= MAX_CACHED_ROUTES) this.routes.clear();
    this.routes.set(key, route);
    this.last = route;
    return route.bytes;
  }

  /**
   * Appends JSON.stringify(e) and a newline to the arena; returns the bytes appended. Throws where
   * JSON.stringify throws (e.g. a BigInt in extras), and then appends nothing.
   */
  append(e: UsageEvent, arena: LineArena): number {
    const route = this.route(e);
    let extrasText: string | null = null;
    let extrasBytes = plainExtrasBytes(e.extras);
    if (extrasBytes < 0) {
      extrasText = JSON.stringify(e.extras);
      extrasBytes = extrasText.length * 3;
    }
    const worst = FIXED_BYTES + route.length + extrasBytes + maxStringBytes(e.request_id.length) + maxStringBytes(e.started_at.length)
      + maxStringBytes(e.finished_at.length) + stringBytes(e.error_code) + stringBytes(e.currency) + stringBytes(e.client);
    const buf = arena.reserve(worst);
    let pos = arena.end;
    pos = putBytes(buf, pos, K_REQUEST_ID);
    pos = putString(buf, pos, e.request_id);
    pos = putBytes(buf, pos, K_STARTED_AT);
    pos = putString(buf, pos, e.started_at);
    pos = putBytes(buf, pos, K_FINISHED_AT);
    pos = putString(buf, pos, e.finished_at);
    pos = putBytes(buf, pos, route);
    pos = putBytes(buf, pos, K_STATUS);
    pos = putNumber(buf, pos, e.status);
    pos = putBytes(buf, pos, K_ERROR_CODE);
    pos = putNullableString(buf, pos, e.error_code);
    pos = putBytes(buf, pos, K_STREAM);
    pos = putBoolean(buf, pos, e.stream);
    pos = putBytes(buf, pos, K_INPUT_TOKENS);
    pos = putNumber(buf, pos, e.input_tokens);
    pos = putBytes(buf, pos, K_OUTPUT_TOKENS);
    pos = putNumber(buf, pos, e.output_tokens);
    pos = putBytes(buf, pos, K_CACHE_READ_TOKENS);
    pos = putNumber(buf, pos, e.cache_read_tokens);
    pos = putBytes(buf, pos, K_CACHE_WRITE_TOKENS);
    pos = putNumber(buf, pos, e.cache_write_tokens);
    pos = putBytes(buf, pos, K_REASONING_TOKENS);
    pos = putNumber(buf, pos, e.reasoning_tokens);
    pos = putBytes(buf, pos, K_COST);
    pos = putNumber(buf, pos, e.cost);
    pos = putBytes(buf, pos, K_CURRENCY);
    pos = putNullableString(buf, pos, e.currency);
    pos = putBytes(buf, pos, K_LATENCY_MS);
    pos = putNumber(buf, pos, e.latency_ms);
    pos = putBytes(buf, pos, K_TTFB_MS);
    pos = putNumber(buf, pos, e.ttfb_ms);
    pos = putBytes(buf, pos, K_ATTEMPTS);
    pos = putNumber(buf, pos, e.attempts);
    pos = putBytes(buf, pos, K_CLIENT_ABORTED);
    pos = putBoolean(buf, pos, e.client_aborted);
    pos = putBytes(buf, pos, K_CLIENT);
    pos = putNullableString(buf, pos, e.client);
    pos = putBytes(buf, pos, K_EXTRAS);
    if (extrasBytes === 2) {
      pos = putBytes(buf, pos, EMPTY_EXTRAS_AND_END);
    } else {
      pos = extrasText === null ? putPlainExtras(buf, pos, e.extras) : pos + buf.write(extrasText, pos, 'utf8');
      buf[pos++] = 0x7d; // }
      buf[pos++] = 0x0a; // newline
    }
    return arena.commit(pos);
  }
}
