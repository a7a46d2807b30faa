// Translation through the canonical shape, for a route whose upstream speaks another shape:
// inbound codec -> canonical -> the adapter's upstream shape, and back, chunk by chunk.
import { SseParser } from '../http/sse.ts';
import type { CanonicalResponse, StreamEvent } from '../canonical/types.ts';
import type { EncodeContext, InboundCodec, Route, StreamDecoder, StreamSeen, UpstreamBody, UpstreamRequest } from '../hooks.ts';
import { RelayError, type RelayErrorBody } from '../errors.ts';
import { resume } from './hold.ts';
import { isEventStream, retryAfterMs } from './failure.ts';
import type { Attempt, AttemptResult } from './attempt.ts';
import { responseToEvents } from './response-events.ts';
import { decodeErrorBody, readErrorBody, redactCredentialText } from './upstream-error.ts';
import { headerSecretsOf } from './sendable-host.ts';
import { HostSecrets } from './credential-scrub.ts';
import { readUpstreamBody } from '../http/read-body.ts';
import { contentCoding } from '../http/content-encoding.ts';
import { hostKeyRefused, refusesHostKey } from './host-key-refused.ts';
import { EventIdleBound } from './stream-idle.ts';
import { clientRateLimitHeaders } from './rate-limit-headers.ts';
import type { TranslationSource } from './translation-source.ts';
import { StreamCollector } from '../canonical/stream-collector.ts';
import { sameKindOfShape } from '../canonical/counting-shapes.ts';
import { contentChars, deltaChars } from '../canonical/output-token-estimate.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * An answer to translate is read up to this size, whole or streamed (the encoders keep a stream's
 * output for its last event): an answer of 128K output tokens is a few MB; an upstream that never
 * stops would otherwise fill the process's memory.
 */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** A whole answer's text; an answer past MAX_ANSWER_BYTES is not one Relay can read. */
async function readAnswer(body: UpstreamBody): Promise<string> {
  const read = await readUpstreamBody(body, MAX_ANSWER_BYTES);
  if (read.truncated) throw new Error(`it is larger than ${MAX_ANSWER_BYTES} bytes`);
  return read.bytes.toString('utf8');
}

export async function translate(attempt: Attempt, route: Route, credential: string | null, codec: InboundCodec, source: TranslationSource): Promise<AttemptResult> {
  const upstreamShape = route.adapter.translationShape(route.shapes, attempt.call.shape);
  attempt.writer.dropped = null; // a passthrough route tried before may have set it; this answer names its own
  if (!upstreamShape || !sameKindOfShape(attempt.call.shape, upstreamShape)) return { kind: 'retry' };
  const res = await attempt.send(route, translatedRequest(attempt, route, upstreamShape, credential, source), (r, c) => translatedRequest(attempt, r, upstreamShape, c, source));
  if (res === null) return { kind: 'retry' };
  // A hedge (hedge.ts) may have answered on the next route.
  if (attempt.sentRoute !== route) [route, credential] = [attempt.sentRoute!, attempt.hedgeCredential];
  // An upstream may quote Relay's key mid-answer (an error event); the caller never gets it.
  const hostSecrets = HostSecrets.withSent(headerSecretsOf(route.host), res.sentCredentials);
  attempt.writer.keepOut(route.hostKey === null ? null : credential, hostSecrets);
  // The upstream's rate limits in the client's vendor's names (rate-limit-headers.ts).
  const limits = clientRateLimitHeaders(res.headers, upstreamShape, codec.shape);

  if (res.status >= 400) {
    const verdict = attempt.retry.verdict(res.status);
    attempt.reportStatus(route, res.status, verdict.failure, retryAfterMs(res.headers));
    const read = decodeErrorBody(await readErrorBody(res.body).catch(() => Buffer.alloc(0)), headerValue(res.headers['content-encoding']));
    if (verdict.retryable && !attempt.isLast) return { kind: 'retry' };
    // Same status and meaning, in the caller's shape; a refused host key is a 502 (host-key-refused.ts).
    let error = route.adapter.decodeError(upstreamShape, res.status, 'plain' in read ? read.plain.toString('utf8') : '');
    // A body Relay could not decode (a coding this Node lacks, a bomb) is not guessed at: the caller learns why.
    if ('unreadable' in read) error = { ...error, message: `${error.message}; its error body was not read: ${read.unreadable}` };
    // Vendors quote a refused key back: Relay's own never reaches the caller, in whatever spelling the upstream's JSON had it;
    // nor do the host's header values (a gateway's key), in proxy mode too.
    if ((route.hostKey && credential !== null) || hostSecrets) error = withoutCredential(error, route.hostKey ? credential ?? '' : '', hostSecrets?.values);
    if (refusesHostKey(route, res.status)) throw hostKeyRefused(res.status, error.message);
    // A refusal another model may answer (a prompt over this one's window, its content filter).
    if (!verdict.retryable && attempt.movesOn(error.reason)) return { kind: 'next_model' };
    const status = res.status;
    const rendered = codec.renderError({ ...error, status });
    attempt.record.status = status;
    attempt.record.errorCode = error.code;
    attempt.writer.commit(rendered.status, { 'content-type': 'application/json', ...(rendered.headers ?? {}), ...limits }, false, true);
    await attempt.writer.write(JSON.stringify(rendered.body));
    attempt.writer.end();
    return { kind: 'done' };
  }

  // Relay asks for identity (translatedRequest): a compressed answer is not read, so not inflated either.
  const coding = contentCoding(res.headers['content-encoding']);
  if (coding !== null) {
    res.body.destroy();
    return attempt.networkFailure(route, new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE',
      `the upstream's answer is in content-encoding ${JSON.stringify(coding.slice(0, 64))}, which Relay did not ask for and does not translate`));
  }

  // What of the answer the client does not get, named by the upstream's decoder and the client's encoder.
  const answerDropped: string[] = [];
  if (!attempt.call.stream || !isEventStream(res.headers)) {
    let response: CanonicalResponse;
    try {
      response = route.adapter.decodeResponse(upstreamShape, JSON.parse(await readAnswer(res.body)), route, source.routed(route, attempt.call.stream), answerDropped);
    } catch (err) {
      if (attempt.clientGone) throw err;
      if (!attempt.isLast) return { kind: 'retry' };
      throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', `the upstream's response could not be read: ${whyUnread(err)}${notAnEventStream(attempt.call.stream, res.headers)}`);
    }
    attempt.reportSuccess(route);
    // A token count is not a generation: nothing to bill (as when count_tokens is passed through).
    if (!codec.countsTokens) attempt.record.usage = response.usage;
    attempt.record.generatedChars = () => contentChars(response.content);
    const ctx = source.encodeContext(attempt.request.id, attempt.servedModel ?? attempt.call.model);
    ctx.dropped = answerDropped;
    // Kept before the answer's last byte: a follow-up on any instance finds it (translation-source.ts).
    if (attempt.call.stream) {
      if (source.keepsAnswer) await source.remember(response, ctx, attempt.writer.keyMask);
      return streamEvents(attempt, codec, ctx, responseToEvents(response, answerDropped), limits, () => source.droppedHeader(route, answerDropped));
    }
    // Encoded before the head: what the client's shape has no place for is named in it.
    const text = untranslatable(attempt, () => JSON.stringify(codec.encodeResponse(response, ctx)));
    attempt.record.status = 200;
    attempt.writer.commit(200, Object.assign({}, JSON_HEADERS, limits, source.droppedHeader(route, answerDropped)), false, true);
    if (source.keepsAnswer) await source.remember(response, ctx, attempt.writer.keyMask);
    await attempt.writer.write(text);
    attempt.writer.end();
    return { kind: 'done' };
  }

  return translateStream(attempt, route, upstreamShape, codec, source, res.body, limits, answerDropped);
}

/** Why an answer could not be read, in words: a stack overflow is JSON nested past what Relay walks, not Relay failing. */
function whyUnread(err: unknown): string {
  // JSON.parse's message quotes the answer's bytes, which no scrubber has seen: a host key could be among them.
  if (err instanceof SyntaxError) return 'it is not valid JSON';
  const message = (err as Error)?.message ?? String(err);
  return err instanceof RangeError && /call stack/i.test(message) ? 'it is nested too deeply to read' : message;
}

/** Why a streamed call's answer was read as one JSON body: its content type is not an event stream (NDJSON, say). */
function notAnEventStream(stream: boolean, headers: Record<string, string | string[] | undefined>): string {
  if (!stream) return '';
  const type = headerValue(headers['content-type']);
  const answered = type === undefined ? 'no content-type' : `content-type ${JSON.stringify(type.slice(0, 64))}`;
  return ` (asked to stream, it answered with ${answered}, not text/event-stream, so it was read as one JSON body)`;
}

/** A header's one value (content-encoding), or undefined. */
function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A decoded upstream error without `credential` in the words the caller gets (its message, the field it names). */
function withoutCredential(error: RelayErrorBody, credential: string, others?: readonly string[]): RelayErrorBody {
  const message = redactCredentialText(error.message, credential, others);
  const field = error.field === undefined ? undefined : redactCredentialText(error.field, credential, others);
  return message === error.message && field === error.field ? error : { ...error, message, ...(field === undefined ? {} : { field }) };
}

/**
 * An answer the client's encoder could not write (a value of a type the vendor never sends) is the
 * upstream's bad answer, a 502 before the head, not Relay's 500.
 */
function untranslatable<T>(attempt: Attempt, encode: () => T): T {
  try {
    return encode();
  } catch (err) {
    attempt.noteUntranslatable(err);
    throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', `the upstream's answer could not be translated: ${whyUnread(err)}`);
  }
}

/** The upstream request for `route`: the canonical request in the adapter's shape, as JSON. */
function translatedRequest(attempt: Attempt, route: Route, upstreamShape: string, credential: string | null, source: TranslationSource): UpstreamRequest {
  const stream = attempt.call.stream;
  const dropped: string[] = [];
  // A model the catalog marks reasoning: false gets none (TranslationSource.routed).
  if (source.request.reasoning !== undefined && route.model?.spec.reasoning === false) dropped.push('reasoning');
  const body = JSON.stringify(route.adapter.encodeRequest(upstreamShape, source.routed(route, stream), route, dropped));
  source.noteUpstreamDropped(route, dropped);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', 'accept-encoding': 'identity' };
  if (route.hostKey === null && attempt.principal.passthroughCredential) Object.assign(headers, attempt.principal.passthroughCredential);
  return attempt.upstreamRequest({ route, shape: upstreamShape, body, headers, credential, stream });
}

async function translateStream(
  attempt: Attempt, route: Route, upstreamShape: string, codec: InboundCodec, source: TranslationSource, body: UpstreamBody,
  limits: Record<string, string>, answerDropped: string[],
): Promise<AttemptResult> {
  const decoder: StreamDecoder = route.adapter.streamDecoder(upstreamShape, route, source.routed(route, attempt.call.stream), answerDropped);
  const ctx = source.encodeContext(attempt.request.id, attempt.servedModel ?? attempt.call.model);
  ctx.dropped = answerDropped;
  const encoder = codec.streamEncoder(ctx);
  // What a stateful shape keeps is rebuilt from the events the client got; its closing frames
  // (from the end event on) are held until it is kept, so a follow-up on any instance finds it.
  const collector = source.keepsAnswer ? new StreamCollector() : null;
  let held: string | null = null;
  let pending: StreamEvent[] = [];
  let seen: StreamSeen = 'opening';
  /** The status the first error event names (a 429 for a rate limit), for the hold's failover. */
  let errorStatus: number | null = null;
  /** Frames read so far, ping events left out (stream-idle.ts tells keep-alives from events by it). */
  let frames = 0;
  /** Characters of output the deltas carried: the decoder made them anyway, for an answer whose usage never comes. */
  let generated = 0;
  /** An error event came: the client's stream ends with it (read through a call, which the narrowing of `seen` does not follow). */
  const failed = (): boolean => seen === 'error';
  // Refusal parts before the end are held as opening: an answer that is only a refusal ended by a
  // content filter (Azure adds one naming the categories) is a content-filter stop, not output.
  let refusalParts: Set<number> | null = null;
  const parser = new SseParser((event, data) => {
    if (event !== 'ping') frames++;
    let events: StreamEvent[];
    try {
      events = decoder.decode(event, data);
    } catch {
      events = [badFrame('the upstream sent a frame Relay could not read')];
    }
    for (const ev of events) {
      if (ev.type === 'error') {
        seen = 'error';
        errorStatus ??= ev.error.status;
        // Before the commit the hold decides (fail over, or record it on the last candidate).
        if (attempt.writer.isCommitted) attempt.record.errorCode ??= 'upstream_stream_error';
      } else if (seen === 'opening') seen = openingOrNot(ev);
      if (ev.type === 'delta') generated += deltaChars(ev.delta);
      if (ev.type === 'end') attempt.record.usage = ev.usage;
      pending.push(ev);
    }
  }, {
    // A frame that cannot be read cannot be translated: the stream fails as with a broken frame.
    onOversize: (limit) => {
      attempt.noteOversizedFrame(route, limit, 'the translated stream ends with an error');
      seen = 'error';
      if (attempt.writer.isCommitted) attempt.record.errorCode ??= 'upstream_stream_error';
      pending.push(badFrame(`the upstream sent an event larger than ${limit} bytes`));
    },
  });
  /** What `ev` makes of a stream that showed no output yet. */
  const openingOrNot = (ev: StreamEvent): StreamSeen => {
    if (ev.type === 'part_start' && ev.part.type === 'refusal') {
      (refusalParts ??= new Set()).add(ev.index);
      return 'opening';
    }
    if (ev.type === 'delta' || ev.type === 'part_start') return refusalParts?.has(ev.index) ? 'opening' : 'output';
    if (ev.type === 'end') return ev.stop_reason === 'content_filter' || ev.stop_reason === 'refusal' ? 'content_filter' : 'output';
    return 'opening';
  };
  const take = (): string => {
    let out = '';
    for (const ev of pending) {
      collector?.add(ev);
      const text = encoder.encode(ev);
      if (held !== null) held += text;
      else if (collector && ev.type === 'end') held = text;
      else out += text;
    }
    pending = [];
    return out;
  };
  /** What take() gives, and what it held back. */
  const takeAll = (): string => {
    const out = take() + (held ?? '');
    held = null;
    return out;
  };

  const hold = await attempt.holdStream(route, body, (chunk) => { parser.feed(chunk); return seen; }, () => errorStatus);
  if (hold.kind !== 'held') return hold;
  if (hold.verdict === 'ended') parser.end(); // a last frame without its blank line
  // Closed with nothing but opening (and refusal) frames: the decoder's closing events may still say
  // a content filter stopped it (a stream cut after its finish_reason, without [DONE]).
  let closing: StreamEvent[] | null = null;
  if (hold.verdict === 'ended' && seen === 'opening') {
    closing = decoder.finish();
    if (closing.some((ev) => ev.type === 'end' && openingOrNot(ev) === 'content_filter')) seen = 'content_filter';
  }
  if (seen === 'content_filter' && hold.verdict === 'ended' && attempt.movesOn('content_filter')) {
    attempt.reportSuccess(route);
    return { kind: 'next_model' };
  }
  if (hold.verdict === 'ended' && seen === 'opening') {
    // The upstream closed its stream before any output: nothing a client could use, and nothing
    // sent yet, so it fails over like an error; on the last candidate it is a 502.
    attempt.reportStatus(route, 200, 'server', null);
    if (!attempt.isLast) return { kind: 'retry' };
    throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'The upstream closed its stream before sending any output.');
  }

  const writer = attempt.writer;
  attempt.record.status = 200;
  // Pending events are encoded before the head, so what they drop is named in it; what is
  // dropped later goes in an x-relay-dropped trailer (droppedTrailer).
  const opening = untranslatable(attempt, take);
  const named = source.droppedNames(route, answerDropped);
  writer.commit(200, Object.assign({ 'content-type': encoder.contentType, 'cache-control': 'no-cache' }, limits, source.droppedHeader(route, answerDropped)), false, true);
  const idle = new EventIdleBound(route.host.spec.timeoutMs, frames);
  try {
    await writer.write(opening);
    writer.flush();
    let streamed = 0;
    // The client's stream ends with an error event: nothing after it is read, however long the upstream stays.
    if (!failed()) for await (const chunk of resume(hold.iterator, hold.pending)) {
      streamed += chunk.length;
      if (streamed > MAX_ANSWER_BYTES) throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', `The upstream's stream passed ${MAX_ANSWER_BYTES} bytes, more than Relay translates.`);
      parser.feed(chunk);
      const full = writer.write(take());
      if (full) await full;
      if (failed()) break;
      idle.check(frames, parser.midFrame);
    }
    if (failed()) body.destroy();
    else parser.end();
    for (const ev of closing ?? decoder.finish()) {
      if (ev.type === 'end') attempt.record.usage = ev.usage;
      // The decoder's word that the stream ended before its end event.
      if (ev.type === 'error') attempt.record.errorCode ??= 'upstream_stream_error';
      pending.push(ev);
    }
    const open = take();
    if (open !== '') await writer.write(open);
    const collected = collector?.response();
    if (collected) await source.remember(collected, ctx, writer.keyMask);
    await writer.write(takeAll() + encoder.finish());
    droppedTrailer(writer, named, source.droppedNames(route, answerDropped));
    writer.end();
  } catch (err) {
    body.destroy();
    if (attempt.clientGone || writer.clientGone) {
      attempt.failAfterCommit(err);
    } else {
      // The upstream broke mid-stream: end the client's stream in its own shape (an error event,
      // e.g. Responses' response.failed) instead of cutting it; no failover once bytes flowed.
      await closeWithError(attempt, decoder, encoder, takeAll, ownReason(err, route.host.spec.timeoutMs) ?? err);
    }
  }
  // Ended before its end event (cut, broken, or closed early): what the upstream reported so far, as a passthrough tap records it.
  attempt.record.usage ??= decoder.usage?.() ?? null;
  attempt.record.generatedChars = () => generated;
  return { kind: 'done' };
}

/** An upstream that sent nothing for the host's timeoutMs mid-stream (undici's body timeout) said so in Relay's words. */
function ownReason(err: unknown, timeoutMs: number): RelayError | null {
  if ((err as { code?: unknown } | null)?.code !== 'UND_ERR_BODY_TIMEOUT') return null;
  return new RelayError('RELAY_ERR_UPSTREAM_TIMEOUT', `The upstream sent nothing for ${timeoutMs} ms (the host's timeoutMs) in the middle of its stream.`);
}

async function closeWithError(attempt: Attempt, decoder: StreamDecoder, encoder: ReturnType<InboundCodec['streamEncoder']>, take: () => string, err: unknown): Promise<void> {
  attempt.noteStreamBroken(err, 'the client\'s stream ends with an error event');
  try {
    const pending = take();
    // Relay's own reason for stopping (a bound, the host's timeout) replaces the decoder's "the stream ended early".
    const own = err instanceof RelayError ? err : null;
    const closing = decoder.finish()
      .map((ev) => (own && ev.type === 'error' ? { ...ev, error: { ...ev.error, code: own.code, message: own.message } } : ev))
      .map((ev) => encoder.encode(ev)).join('');
    await attempt.writer.write(pending + closing + encoder.finish());
    attempt.writer.end();
  } catch {
    attempt.failAfterCommit(err);
  }
}

async function streamEvents(
  attempt: Attempt, codec: InboundCodec, ctx: EncodeContext, events: StreamEvent[], limits: Record<string, string>, dropped: () => Record<string, string>,
): Promise<AttemptResult> {
  const encoder = codec.streamEncoder(ctx);
  let out = '';
  for (const ev of events) out += encoder.encode(ev);
  out += encoder.finish();
  attempt.record.status = 200;
  attempt.writer.commit(200, Object.assign({ 'content-type': encoder.contentType, 'cache-control': 'no-cache' }, limits, dropped()), false, true);
  await attempt.writer.write(out);
  attempt.writer.end();
  return { kind: 'done' };
}

/**
 * What a stream drops after its head went is named in an x-relay-dropped trailer (the whole
 * list, as the header would hold it); not announced in a Trailer header, which Node refuses
 * on a response that is not chunked (an HTTP/1.0 client).
 */
function droppedTrailer(writer: Attempt['writer'], atHead: string, atEnd: string): void {
  if (atEnd !== atHead) writer.trailers({ 'x-relay-dropped': atEnd });
}

function badFrame(message: string): StreamEvent {
  return { type: 'error', error: { type: 'upstream', code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', message, status: 502 } };
}
