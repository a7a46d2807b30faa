// An in-house usage backend that lives outside plugins/: it posts batches of usage events as
// JSON to an HTTP endpoint. The shared queue in Relay's observer does the batching, the retries
// with backoff and the accounting of anything it cannot deliver; this file only says how to
// write one batch. Select it at run time with PUT /api/settings/usage-logging {"backend":"http"}.
import { definePlugin, Type, type UsageBackend, type UsageEvent } from 'relay-gateway';
import type { BatchWriteOptions } from 'relay-gateway/log-backends';

export default definePlugin({
  name: 'log-sink-http',
  kind: 'log',
  description: 'Posts usage events in batches to an HTTP endpoint.',
  options: Type.Object({
    url: Type.String({ pattern: '^https?://', description: 'Endpoint that receives POSTed batches: {"events": [...]}' }),
    id: Type.String({ default: 'http', description: 'Backend id used in the usage-logging setting.' }),
    timeoutMs: Type.Integer({ minimum: 100, default: 5_000 }),
    headers: Type.Record(Type.String(), Type.String(), { default: {} }),
  }, { additionalProperties: false }),
  backends: (options) => ({ usage: [options.id] }),
  register(relay, options) {
    const backend: UsageBackend = {
      id: options.id,
      // `signal` is the queue's: aborted when it stops waiting for this call (its write deadline,
      // shutdown). Handed to fetch, it ends a post the endpoint never answers, so the retry goes out.
      async write(events: UsageEvent[], write?: BatchWriteOptions) {
        const timeout = AbortSignal.timeout(options.timeoutMs);
        const res = await fetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...options.headers },
          body: JSON.stringify({ events }),
          signal: write ? AbortSignal.any([write.signal, timeout]) : timeout,
        });
        // Throwing makes the shared queue retry this batch with backoff.
        if (!res.ok) throw new Error(`log sink answered ${res.status}`);
      },
    };
    relay.hooks.addUsageBackend(backend);
    relay.log.info({ url: new URL(options.url).origin }, 'http usage sink ready');
  },
});
