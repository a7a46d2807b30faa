// Same-shape passthrough: the request goes to the upstream as received (but for the model
// name's value when the binding maps it), and the upstream's status, headers and bytes come back
// unchanged. Usage is read from a tap on the bytes, never by holding the response.
import { RelayError, codeForUpstreamStatus } from '../errors.ts';
import { filterForwardHeaders, withoutAccountHeaders } from '../http/headers.ts';
import { contentCoding } from '../http/content-encoding.ts';
import { RouteCall } from '../http/inference-route.ts';
import { setTopLevelMembers } from '../http/inference-body.ts';
import type { InboundCodec, Route, UpstreamResponse, UsageRequest } from '../hooks.ts';
import { HEAD_BYTES, TAIL_BYTES, UsageCopy, WHOLE_COPY_BYTES } from './usage-copy.ts';
import { resume } from './hold.ts';
import { isEventStream, retryAfterMs } from './failure.ts';
import type { Attempt, AttemptResult } from './attempt.ts';
import { SseFrameFilter } from './frame-filter.ts';
import { StreamTap } from './stream-tap.ts';
import { EventIdleBound } from './stream-idle.ts';
import { readErrorBody, redactCredential, type RedactedBody } from './upstream-error.ts';
import { headerSecretsOf } from './sendable-host.ts';
import { HostSecrets } from './credential-scrub.ts';
import { hostKeyRefused, refusesHostKey } from './host-key-refused.ts';
import type { ForwardedCapture } from './forwarded-capture.ts';
import { generatedChars } from '../canonical/output-token-estimate.ts';

/**
 * The body to send: the client's bytes as received. The members that change (the model name the
 * binding maps, what the adapter sets to get usage) are replaced or added in those bytes:
 * passthrough forwards verbatim, and re-serialising would change escapes, key order and whitespace.
 */
function upstreamBody(attempt: Attempt, route: Route, usage: UsageRequest | null, forwarded: ForwardedCapture | null, codec: InboundCodec | null, dropped: string[]): Buffer | string {
  const { call } = attempt;
  // It references what only Relay knows (a translated turn): the upstream gets the conversation itself.
  const substitute = forwarded?.substitute ?? null;
  // What another vendor made (a conversation begun elsewhere) is left out: this upstream would refuse it.
  const own = codec?.passthroughBody?.(substitute ? JSON.stringify(substitute) : call.body, () => substitute ?? call.json(), route.adapter.id, dropped) ?? substitute;
  // An undefined value leaves the member out (JSON.stringify skips it).
  const set: Record<string, unknown> = { ...usage?.set, ...attempt.standardSpeed };
  if (own) return JSON.stringify({ ...own, ...set, model: route.upstreamModel });
  const values: Record<string, string> = {};
  let removes = false;
  if (route.upstreamModel !== call.model) values.model = JSON.stringify(route.upstreamModel);
  for (const [name, value] of Object.entries(set)) {
    if (value === undefined) removes = true;
    else values[name] = JSON.stringify(value);
  }
  if (Object.keys(values).length === 0 && !removes) return call.body;
  const edited = !removes && call instanceof RouteCall ? setTopLevelMembers(call.body, call.read, values) : null;
  return edited ?? JSON.stringify({ ...call.json(), ...set, model: route.upstreamModel });
}

export async function passthrough(
  attempt: Attempt, route: Route, credential: string | null, forwarded: ForwardedCapture | null = null, codec: InboundCodec | null = null,
): Promise<AttemptResult> {
  const { call, request } = attempt;
  const headers = filterForwardHeaders(request.headers);
  // Said, not left out: without accept-encoding any coding is acceptable (RFC 9110 12.5.3).
  headers['accept-encoding'] = 'identity';
  if (route.hostKey === null && attempt.principal.passthroughCredential) Object.assign(headers, attempt.principal.passthroughCredential);
  // Without it a streamed Chat Completion reports no tokens, and the usage record would be 0.
  const usage = call.stream ? route.adapter.usageRequest?.(call.shape, call) ?? null : null;
  const dropped = new Map<Route, string[]>();
  const build = (r: Route, c: string | null) => {
    const names: string[] = [];
    dropped.set(r, names);
    return attempt.upstreamRequest({
      route: r, shape: call.shape, body: upstreamBody(attempt, r, usage, forwarded, codec, names),
      headers: r.hostKey === null ? headers : withoutAccountHeaders(headers), credential: c, search: call.search, stream: call.stream,
    });
  };
  const res = await attempt.send(route, build(route, credential), build);
  if (res === null) return { kind: 'retry' };
  // A hedge (hedge.ts) may have answered on the next route.
  if (attempt.sentRoute !== route) [route, credential] = [attempt.sentRoute!, attempt.hedgeCredential];
  const names = dropped.get(route) ?? [];
  attempt.writer.dropped = names.length > 0 ? names.join(', ') : null;
  // An upstream may quote Relay's key mid-answer (an error event, a 200 that is an error).
  const secrets = HostSecrets.withSent(headerSecretsOf(route.host), res.sentCredentials);
  attempt.writer.keepOut(route.hostKey === null ? null : credential, secrets);
  // Compressed bytes hide the key from the scrubber (and usage from the tap): refused before the first byte.
  if (res.status < 400 && route.hostKey !== null && credential !== null) {
    const coding = contentCoding(res.headers['content-encoding']);
    if (coding !== null) {
      res.body.destroy();
      return attempt.networkFailure(route, new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE',
        `the upstream's answer is in content-encoding ${JSON.stringify(coding.slice(0, 64))}, which Relay did not ask for (it asks for identity) and cannot check for its host key`));
    }
  }

  if (res.status >= 400) {
    const verdict = attempt.retry.verdict(res.status);
    attempt.reportStatus(route, res.status, verdict.failure, retryAfterMs(res.headers));
    // A caller's own credential (proxy mode) that the upstream refuses is refused everywhere.
    const ownCredentialRefused = route.hostKey === null && verdict.failure === 'auth';
    if (verdict.retryable && !attempt.isLast && !ownCredentialRefused) {
      res.body.resume();
      return { kind: 'retry' };
    }
    attempt.record.errorCode = `upstream_${res.status}`;
    // Errors pass through unmodified (clients match on their wording), but for Relay's own key.
    if (route.hostKey === null || credential === null) return pipeAll(attempt, res, null);
    return sendOwnKeyError(attempt, route, res, credential, secrets, !verdict.retryable);
  }

  if (!isEventStream(res.headers)) return pipeAll(attempt, res, route, forwarded);
  return streamWithHold(attempt, route, res, usage, forwarded);
}

/**
 * An error answer to Relay's own host key: the same body without the key (vendors quote a refused
 * key back); a key the upstream refused is Relay's own 502 (host-key-refused.ts), the gateway's
 * problem, never a 401/403 or an authentication error the caller would take for its own.
 */
async function sendOwnKeyError(attempt: Attempt, route: Route, res: UpstreamResponse, credential: string, secrets: HostSecrets | null, refusal: boolean): Promise<AttemptResult> {
  const status = res.status;
  const encoding = res.headers['content-encoding'];
  let redacted: RedactedBody;
  try {
    // Several content-encoding headers are several codings: not one Relay decodes, so never passed unchecked.
    redacted = redactCredential(await readErrorBody(res.body), Array.isArray(encoding) ? encoding.join(', ') : encoding, credential, secrets?.values);
  } catch (err) {
    // Nothing reached the client yet: a 502 in its shape (or the client's own abort).
    if (attempt.clientGone) throw err;
    throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', `the upstream's error answer could not be read: ${(err as Error).message}`);
  }
  if ('unreadable' in redacted) {
    if (refusesHostKey(route, status)) throw hostKeyRefused(status, undefined);
    throw unreadableError(status, res.headers, redacted.unreadable);
  }
  // Refused: Relay's own 502 in the caller's shape, not the vendor's authentication error (host-key-refused.ts).
  if (refusesHostKey(route, status)) {
    throw hostKeyRefused(status, route.adapter.decodeError(attempt.call.shape, status, redacted.body.toString('utf8')).message);
  }
  // A refusal another model may answer (a prompt over this one's window, its content filter).
  if (refusal && attempt.movesOn(route.adapter.decodeError(attempt.call.shape, status, redacted.body.toString('utf8')).reason)) {
    return { kind: 'next_model' };
  }
  // Sent decoded (redactCredential decoded it to look for the key).
  const headers: Record<string, string | string[] | undefined> = { ...res.headers, 'content-length': String(redacted.body.length) };
  delete headers['content-encoding'];
  attempt.record.status = status;
  attempt.writer.commit(status, headers, true);
  const full = attempt.writer.write(redacted.body);
  if (full) await full;
  attempt.writer.end();
  return { kind: 'done' };
}

/**
 * An error body Relay could not check for its host key is not passed on: the caller gets the
 * upstream's status as Relay's own error (its retry-after kept), saying why.
 */
function unreadableError(status: number, headers: UpstreamResponse['headers'], why: string): RelayError {
  const retryAfter = headers['retry-after'];
  return new RelayError(codeForUpstreamStatus(status), `The upstream answered HTTP ${status}; its error body is not passed on, as Relay could not check it for its host key: ${why}.`,
    typeof retryAfter === 'string' ? { headers: { 'retry-after': retryAfter } } : {});
}

/**
 * Non-streamed body: sent as it arrives, once its first bytes came (a body misframed from its start
 * is still a failure before the first byte: it fails over, or is a 502). A copy (usage-copy.ts) is
 * read for usage at the end.
 */
async function pipeAll(attempt: Attempt, res: UpstreamResponse, route: Route | null, forwarded: ForwardedCapture | null = null): Promise<AttemptResult> {
  const iterator = res.body[Symbol.asyncIterator]();
  let first: IteratorResult<Buffer>;
  try {
    first = await iterator.next();
  } catch (err) {
    if (attempt.clientGone) throw err;
    return attempt.networkFailure(route ?? attempt.record.route!, err);
  }
  const copy = route ? new UsageCopy() : null;
  const writer = attempt.writer;
  writer.commit(res.status, res.headers, true);
  attempt.record.status = res.status;
  if (route) attempt.reportSuccess(route);
  try {
    for (let step = first; !step.done; step = await iterator.next()) {
      copy?.add(step.value);
      forwarded?.observe(step.value);
      const full = writer.write(step.value);
      if (full) await full;
    }
    writer.end();
  } catch (err) {
    attempt.failAfterCommit(err);
    return { kind: 'done' };
  }
  forwarded?.finish(false, res.status, true, writer.keyMask, copy);
  if (route && copy) {
    attempt.record.usage = copy.usage(route.adapter, attempt.call.shape);
    // Also with usage: one whose output count cannot be read is estimated from the answer (unreported-usage.ts).
    attempt.record.generatedChars = answerChars(copy);
    if (attempt.record.usage === null && !copy.whole) attempt.noteUnreadUsage(route, `its usage was in neither the first ${HEAD_BYTES} nor the last ${TAIL_BYTES} bytes of an answer over ${WHOLE_COPY_BYTES}`);
  }
  return { kind: 'done' };
}

/** The generated characters of an answer kept whole, read only if its usage is estimated (unreported-usage.ts); 0 for one kept in part. */
function answerChars(copy: UsageCopy): () => number {
  return () => {
    const body = copy.wholeBody();
    if (body === null) return 0;
    try {
      return generatedChars(JSON.parse(body.toString('utf8')));
    } catch {
      return 0; // not JSON: nothing read of it
    }
  };
}

async function streamWithHold(attempt: Attempt, route: Route, res: UpstreamResponse, usage: UsageRequest | null, forwarded: ForwardedCapture | null): Promise<AttemptResult> {
  const tap = new StreamTap(route.adapter.streamInspector(attempt.call.shape), (limit) => {
    // The client still gets the frame's bytes; only the tap skips it.
    attempt.noteOversizedFrame(route, limit, 'the client got it, but usage was not read from it');
    forwarded?.oversizedFrame();
  }, forwarded ? (event, data) => forwarded.frame(event, data) : undefined);
  const hold = await attempt.holdStream(route, res.body, (chunk) => tap.hold(chunk));
  if (hold.kind !== 'held') return hold;

  const writer = attempt.writer;
  writer.commit(res.status, res.headers, false);
  attempt.record.status = res.status;
  // The bytes go out as they came, unless frames the client did not ask for must be hidden (not in
  // a compressed stream, which Relay did not ask for and cannot edit without corrupting it).
  const filter = usage && contentCoding(res.headers['content-encoding']) === null ? new SseFrameFilter((event, data) => usage.clientFrame(event, data)) : null;
  const forward = (chunk: Buffer) => writer.write(filter ? filter.push(chunk) : chunk);
  let delivered = false;
  const idle = new EventIdleBound(route.host.spec.timeoutMs, tap.frames);
  // forward() returns a promise only when the client's socket is full.
  try {
    for (const chunk of hold.held) {
      const full = forward(chunk);
      if (full) await full;
    }
    writer.flush();
    for await (const chunk of resume(hold.iterator, hold.pending)) {
      const full = forward(chunk);
      if (full) await full;
      tap.pass(chunk);
      idle.check(tap.frames, tap.midFrame);
    }
    if (filter) await writer.write(filter.end());
    writer.end();
    delivered = true;
  } catch (err) {
    // Broken off by Relay (only keep-alives): the upstream is hung up on too.
    res.body.destroy();
    attempt.failAfterCommit(err);
  }
  const tapped = tap.finish();
  // After the last byte, from the frames the tap parsed.
  forwarded?.finish(true, res.status, delivered, writer.keyMask);
  // An in-stream error after output: the client got it as the upstream sent it; the record says so.
  if (tapped.error) attempt.record.errorCode ??= 'upstream_stream_error';
  attempt.record.usage = tapped.usage;
  attempt.record.generatedChars = () => tap.output.chars();
  return { kind: 'done' };
}
