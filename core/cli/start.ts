// `relay start`: runs until SIGTERM or SIGINT, then drains and exits 0.
import { createRelay } from '../server/relay.ts';

export async function startService(configFile: string): Promise<void> {
  const relay = await createRelay({ configFile });
  const { inferenceUrl, controlUrl } = await relay.listen();
  relay.log.info({ inference: inferenceUrl, control: controlUrl }, 'relay is listening');
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
