// log-valkey: recent usage history in Valkey (or Redis), capped and expiring.
import { Redis } from 'ioredis';
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { valkeyClientOptions } from '../../core/plugin-api/log-backends.ts';
import { ValkeyUsageBackend } from './valkey-usage-backend.ts';

export const LogValkeyOptions = Type.Object({
  url: Type.Optional(Type.String({ description: 'redis:// URL; a connection to the config\'s valkey.url when unset.' })),
  keyPrefix: Type.String({ default: 'relay:usage:', description: 'Prefix of every key the backend writes.' }),
  maxEvents: Type.Integer({ minimum: 1, default: 50_000, description: 'Most events held; the oldest are dropped beyond it.' }),
  ttlSeconds: Type.Integer({ minimum: 1, default: 7 * 86_400, description: 'Events expire this long after they are written (and leave the history once they started longer ago).' }),
  timeoutMs: Type.Integer({
    minimum: 100, maximum: 600_000, default: 5_000,
    description: 'Deadline of one command on the own connection (with url): past it a write fails (the queue retries it) and a silent connection is opened again. Without url, the config\'s valkey.timeoutMs applies.',
  }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'log-valkey',
  kind: 'log',
  description: 'Recent usage history in Valkey/Redis, capped in count and time.',
  options: LogValkeyOptions,
  backends: () => ({ usage: ['valkey'] }),
  register(relay, options) {
    const own = options.url ? new Redis(options.url, valkeyClientOptions(options.timeoutMs)) : null;
    const redis = own ?? relay.valkey();
    if (!redis) throw new Error('log-valkey needs a Valkey connection: set valkey.url in the config or the plugin\'s url option');
    own?.on('error', (err) => relay.log.warn({ err }, 'log-valkey: connection error'));
    relay.hooks.addUsageBackend(new ValkeyUsageBackend({
      redis, keyPrefix: options.keyPrefix, maxEvents: options.maxEvents, ttlSeconds: options.ttlSeconds,
      onClose: own ? async () => { await own.quit().catch(() => own.disconnect()); } : undefined,
    }));
  },
});
