// Turns a listener's bind error into the one line an operator needs (which port, which
// listener, why), so `relay start` can exit with it instead of a stack trace.
import { StartupError } from '../errors.ts';

const REASONS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this machine',
  ENOTFOUND: 'host name not found',
};

export function listenFailure(err: unknown, host: string, port: number, listener: 'inference' | 'control'): StartupError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (!code || !(code in REASONS)) return null;
  return new StartupError(`cannot listen on ${host}:${port} (${listener} port): ${REASONS[code]}`);
}
