// Loaded into Relay with --import by proxy-in-relay.ts: the bare proxy of node-proxy.ts, on its own
// port inside Relay's process (PROXY_PRELOAD_PORT), forwarding to PROXY_PRELOAD_UPSTREAM. tsx's
// tsImport loads that one TypeScript file without a loader for the rest of the process.
import { tsImport } from 'tsx/esm/api';

const upstream = process.env.PROXY_PRELOAD_UPSTREAM;
if (upstream) {
  const { bareProxy } = await tsImport('./node-proxy.ts', import.meta.url);
  bareProxy(upstream).server.listen(Number(process.env.PROXY_PRELOAD_PORT), '127.0.0.1');
}
