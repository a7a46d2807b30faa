// Key health's marks as stored in Valkey and published to the other instances (key-health.ts),
// guarded by key version (key-version.ts) like the marks in memory: an instance that has not yet
// heard of a newer version's mark (pub/sub delay) neither deletes it nor overwrites it with an
// older version's. The check, the write and the publication are one script, so no write lands
// between the check and its own, and a refused change is not published either.
// Versions are updatedAt, ISO strings of one width: compared byte by byte, as olderVersion
// compares them (Lua's < on strings follows the server's locale).
import type { Redis } from 'ioredis';

// KEYS[1]: the mark's store key. ARGV: the writer's key version ('' when none: a host's mark, about
// every version), the channel, the message, then the mark and its TTL ms (none: a clear).
// Returns 1 when stored (or cleared) and published, 0 when the stored mark is of a newer version.
const SHARE_MARK = `local function older(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local stored = redis.call('GET', KEYS[1])
if stored and ARGV[1] ~= '' then
  local ok, mark = pcall(cjson.decode, stored)
  local version = ok and type(mark) == 'table' and mark.keyVersion
  if type(version) == 'string' and older(ARGV[1], version) then return 0 end
end
if ARGV[4] then redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[5]) else redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`;

/** The script as a command on the client (EVAL the first time on a connection, EVALSHA after). */
interface ShareMarkScript {
  relayShareKeyHealth(key: string, version: string, channel: string, message: string, ...mark: string[]): Promise<number>;
}

export interface SharedChange {
  /** The mark's store key. */
  key: string;
  /** The key version the writer's request met (none: a host's mark, or about every version). */
  version: string | undefined;
  channel: string;
  message: string;
  /** The mark to store (JSON) and for how long; absent: the change clears it. */
  mark?: { value: string; ttlMs: number };
}

/** Stores (or clears) a mark and publishes the change, unless the store holds a newer version's mark. */
export type ShareMark = (change: SharedChange) => Promise<boolean>;

export function defineShareMark(redis: Redis): ShareMark {
  redis.defineCommand('relayShareKeyHealth', { numberOfKeys: 1, lua: SHARE_MARK });
  const scripts = redis as Redis & ShareMarkScript;
  return async ({ key, version, channel, message, mark }) => {
    const stored = mark ? [mark.value, String(Math.max(1, Math.round(mark.ttlMs)))] : [];
    return (await scripts.relayShareKeyHealth(key, version ?? '', channel, message, ...stored)) === 1;
  };
}
