// Time to first byte, which wrk does not report: sequential requests over one keep-alive
// connection, timing from writing the request to the first byte of the response body (and to the
// response headers). For streams this is what a user waits before the first token.
import http from 'node:http';
import type { RoutedRequest } from './targets.ts';

export interface TtfbResult {
  n: number;
  errors: number;
  /** Microseconds from request write to the first body byte. */
  firstByte: { p50: number; p90: number; p99: number; mean: number };
  /** Microseconds from request write to the response headers. */
  headers: { p50: number; p99: number };
  /** Microseconds from request write to the end of the body. */
  total: { p50: number; p99: number };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

interface One {
  headersUs: number;
  firstByteUs: number;
  totalUs: number;
  status: number;
}

function once(agent: http.Agent, r: RoutedRequest, body: Buffer): Promise<One> {
  return new Promise((resolve, reject) => {
    const u = new URL(r.url);
    const t0 = process.hrtime.bigint();
    const us = () => Number(process.hrtime.bigint() - t0) / 1000;
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'POST',
        agent,
        headers: { ...r.headers, 'content-length': String(body.length) },
      },
      (res) => {
        const headersUs = us();
        let firstByteUs = -1;
        res.on('data', () => {
          if (firstByteUs < 0) firstByteUs = us();
        });
        res.on('end', () => resolve({ headersUs, firstByteUs: firstByteUs < 0 ? us() : firstByteUs, totalUs: us(), status: res.statusCode ?? 0 }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function measureTtfb(r: RoutedRequest, n: number, warmup = 20): Promise<TtfbResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = Buffer.from(r.body);
  const fb: number[] = [];
  const hd: number[] = [];
  const tot: number[] = [];
  let errors = 0;
  try {
    for (let i = 0; i < warmup + n; i++) {
      try {
        const o = await once(agent, r, body);
        if (o.status !== 200) {
          errors++;
          continue;
        }
        if (i < warmup) continue;
        fb.push(o.firstByteUs);
        hd.push(o.headersUs);
        tot.push(o.totalUs);
      } catch {
        errors++;
      }
    }
  } finally {
    agent.destroy();
  }
  const s = (a: number[]) => a.sort((x, y) => x - y);
  s(fb);
  s(hd);
  s(tot);
  return {
    n: fb.length,
    errors,
    firstByte: {
      p50: percentile(fb, 50),
      p90: percentile(fb, 90),
      p99: percentile(fb, 99),
      mean: fb.reduce((a, b) => a + b, 0) / (fb.length || 1),
    },
    headers: { p50: percentile(hd, 50), p99: percentile(hd, 99) },
    total: { p50: percentile(tot, 50), p99: percentile(tot, 99) },
  };
}
