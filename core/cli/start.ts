// `relay start`: runs until SIGTERM or SIGINT, then drains and exits 0. A failure to listen
// closes what was opened (bounded) and rejects with a StartupError naming the port.
import { createRelay, type Relay } from '../server/relay.ts';
import { listenFailure } from './listen-failure.ts';
import { turnOffPretenuring } from './heap-tuning.ts';

/** How long a failed start may spend closing what it opened before the process exits anyway. */
const FAILED_START_CLOSE_MS = 500;

export async function startService(configFile: string): Promise<void> {
  turnOffPretenuring();
  const relay = await createRelay({ configFile });
  let urls: { inferenceUrl: string; controlUrl: string };
  const { host, port, controlPort } = relay.config.server;
  relay.log.info({ host, port, controlPort }, 'binding the inference and control ports');
  try {
    urls = await relay.listen();
  } catch (err) {
    // The inference listener binds first: if it listens, the control port is the one that failed.
    const which = relay.inference.server.listening ? 'control' : 'inference';
    await closeWithin(relay, FAILED_START_CLOSE_MS);
    throw listenFailure(err, host, which === 'control' ? controlPort : port, which) ?? err;
  }
  relay.log.info({ inference: urls.inferenceUrl, control: urls.controlUrl }, 'relay is listening');
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    relay.log.info({ signal }, 'shutting down: draining in-flight requests');
    relay.close().then(() => process.exit(0), (err: unknown) => {
      relay.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function closeWithin(relay: Relay, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    relay.close().catch(() => undefined),
    new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); }),
  ]);
  clearTimeout(timer);
}
