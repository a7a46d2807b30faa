// The targets side by side: the fake upstream called directly (the floor), a bare Node proxy (the
// floor of a Node gateway), Relay, and Portkey.
// A target maps a bench case to the HTTP request a client would send it.
import { CASES, vendorAuthHeaders, type BenchCase, type Shape } from './cases.ts';
import type { RelayBenchHandle } from './relay-target.ts';
import type { PortkeyHandle } from './portkey.ts';

export type TargetName = 'direct' | 'node-proxy' | 'relay' | 'portkey';
export const TARGET_ORDER: TargetName[] = ['direct', 'node-proxy', 'relay', 'portkey'];

export interface RoutedRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** A substring of every complete, successful answer. */
  expect: string;
}

export interface Target {
  name: TargetName;
  /** e.g. "portkey 1.15.2". */
  label: string;
  /** The gateway process whose CPU and RSS are measured (none for direct). */
  pid?: number;
  route(c: BenchCase): RoutedRequest | { unsupported: string };
  stop(): Promise<void>;
}

const JSON_CT = { 'content-type': 'application/json' };

export function directTarget(upstreamUrl: string): Target {
  return {
    name: 'direct',
    label: 'direct (fake upstream, no gateway)',
    route: (c) => ({
      url: upstreamUrl + c.direct.path,
      headers: { ...JSON_CT, ...vendorAuthHeaders(c.direct.vendor) },
      body: JSON.stringify(c.direct.body),
      expect: c.direct.expect,
    }),
    stop: async () => {},
  };
}

/** The bare proxy (node-proxy.ts) forwards paths and bodies as they are: the direct request, sent to it. */
export function nodeProxyTarget(baseUrl: string, pid: number, stop: () => Promise<void>): Target {
  return {
    name: 'node-proxy',
    label: 'node-proxy (node:http + undici Pool, forwarding only)',
    pid,
    // A passthrough case sends the upstream the client's own body; a translated one does not.
    route: (c) => c.client.body !== c.direct.body
      ? { unsupported: 'a bare proxy does not translate' }
      : {
        url: baseUrl + c.direct.path,
        headers: { ...JSON_CT, ...vendorAuthHeaders(c.direct.vendor) },
        body: JSON.stringify(c.direct.body),
        expect: c.direct.expect,
      },
    stop,
  };
}

const RELAY_PATHS: Record<Shape, string> = {
  chat: '/vendor-a/v1/chat/completions',
  responses: '/vendor-a/v1/responses',
  embeddings: '/vendor-a/v1/embeddings',
  messages: '/vendor-b/v1/messages',
};

export function relayTarget(h: RelayBenchHandle): Target {
  return {
    name: 'relay',
    label: 'relay',
    pid: h.pid,
    route: (c) => ({
      url: h.baseUrl + RELAY_PATHS[c.client.shape],
      headers: {
        ...JSON_CT,
        authorization: `Bearer ${h.relayKey}`,
        ...(c.client.shape === 'messages' ? { 'anthropic-version': '2023-06-01' } : {}),
      },
      body: JSON.stringify(c.client.body),
      expect: c.client.expect,
    }),
    stop: () => h.stop(),
  };
}

const PORTKEY_PATHS: Record<Shape, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  embeddings: '/v1/embeddings',
  messages: '/v1/messages',
};

export function portkeyTarget(h: PortkeyHandle, upstreamUrl: string): Target {
  return {
    name: 'portkey',
    label: `portkey ${h.version}`,
    pid: h.pid,
    route: (c) => ({
      url: h.baseUrl + PORTKEY_PATHS[c.client.shape],
      headers: {
        ...JSON_CT,
        'x-portkey-provider': c.client.vendor,
        'x-portkey-custom-host': `${upstreamUrl}/v1`,
        ...vendorAuthHeaders(c.client.vendor),
      },
      body: JSON.stringify(c.client.body),
      expect: c.client.expect,
    }),
    stop: () => h.stop(),
  };
}

/** One request, checked: 200 and the expected marker in the body. Returns a reason on failure. */
export async function probe(r: RoutedRequest): Promise<string | undefined> {
  try {
    const res = await fetch(r.url, { method: 'POST', headers: r.headers, body: r.body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    if (res.status !== 200) return `HTTP ${res.status}: ${text.slice(0, 300)}`;
    if (!text.includes(r.expect)) return `answer lacks ${JSON.stringify(r.expect)}: ${text.slice(0, 300)}`;
    return undefined;
  } catch (err) {
    return `request failed: ${String(err)}`;
  }
}

export { CASES };
