// Start-up's check of the usage and payload backends once every plugin has registered: the
// config's selection must be loaded (a StartupError otherwise), and a selection stored at
// runtime that is not loaded here, or no usage backend at all, is worth a warning.
import type { Logger } from 'pino';
import type { RelayConfig } from '../config/schema.ts';
import { StartupError } from '../errors.ts';
import { backendSelectionProblems, storedSelectionWarning, type BackendIds } from '../observer/backend-selection.ts';
import type { Settings } from '../settings/types.ts';

export function checkSelectedBackends(config: RelayConfig, where: string, loaded: BackendIds, settings: Settings, log: Logger): void {
  const problems = backendSelectionProblems(config, loaded);
  if (problems.length > 0) throw new StartupError(problems.map((p) => `${where}: ${p}`).join('\n'));
  if (loaded.usage.length === 0) log.warn('no usage backend is loaded (log-file, log-postgres, ...): usage events are dropped');
  const usage = storedSelectionWarning('usage', settings.get('usage-logging').backend, loaded.usage);
  if (usage) log.warn(usage);
  const payload = settings.get('payload-logging');
  const payloadWarning = payload.enabled ? storedSelectionWarning('payload', payload.backend, loaded.payload) : null;
  if (payloadWarning) log.warn(payloadWarning);
}
