// Hosts whose token counter is not there. A provider lists every shape its adapter speaks unless
// the operator narrows it, so an OpenAI-compatible server (vLLM, Ollama) lists OpenAI's counter and
// an Anthropic-compatible one lists count_tokens, and without this memory each answer cut before
// its usage would send one more request that fails the same way. A count answered 404, 405 or 501
// marks the host and upstream model as missing the counter for MISSING_FOR_MS; their prompts are
// estimated meanwhile, and an edit of the host asks again. Other failures (a 500, a timeout) are the
// counter's bad moment, not its absence, and the next count asks again. A count sent with a
// caller's own credential (proxy mode) marks nothing: what one caller's account is answered must
// not decide for the others.
import type { Route, UpstreamRequest } from '../hooks.ts';

export const MISSING_FOR_MS = 10 * 60_000;
/** 404, 405 and 501: the server has no such endpoint, or takes no POST there. */
const MISSING_STATUSES = new Set([404, 405, 501]);
/** Routes remembered at most (hosts times models); the oldest marks are dropped first. */
const MAX_REMEMBERED = 1024;

export type OnMissingCounter = (route: Route, status: number) => void;

export class MissingCounters {
  /** When the mark of each route's counter ends, by missingKey(). */
  private readonly until = new Map<string, number>();

  constructor(private readonly onMissing: OnMissingCounter = () => {}, private readonly now: () => number = Date.now) {}

  /** Whether the route's counter answered as missing within MISSING_FOR_MS, and its host was not edited since. */
  missing(route: Route): boolean {
    const key = missingKey(route);
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (this.now() < until) return true;
    this.until.delete(key);
    return false;
  }

  /** `req` sent through a client that marks the route's counter as missing when the count is answered as missing. */
  watched(req: UpstreamRequest): UpstreamRequest {
    if (req.credential === null) return req;
    const route = req.route;
    return { ...req, client: req.client.observed((status) => this.answered(route, status)) };
  }

  private answered(route: Route, status: number): void {
    if (!MISSING_STATUSES.has(status)) return;
    const key = missingKey(route);
    const known = this.until.has(key);
    this.until.delete(key);
    if (this.until.size >= MAX_REMEMBERED) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, this.now() + MISSING_FOR_MS);
    if (!known) this.onMissing(route, status);
  }
}

/** The host as edited last, and the model asked of it: a counter may lack one model and not others. */
function missingKey(route: Route): string {
  return `${route.host.metadata.id}@${route.host.metadata.updatedAt}/${route.upstreamModel}`;
}
