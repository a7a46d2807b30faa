// The fake upstream as its own process, for the bench: pinned to a core of its own choosing by the
// caller (taskset), no request recording. Prints `READY <url>` on stdout once listening.
//   node --import tsx test/bench/upstream-process.ts [--chunks N] [--port P]
import { startFakeUpstream } from '../support/fake-upstream.ts';

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};

const up = await startFakeUpstream({
  record: false,
  port: Number(arg('port') ?? 0),
  chunks: Number(arg('chunks') ?? 20),
  chunkDelayMs: Number(arg('chunk-delay') ?? 0),
});
process.stdout.write(`READY ${up.url}\n`);
const stop = () => void up.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
