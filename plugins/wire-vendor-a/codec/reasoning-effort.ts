// OpenAI reasoning effort names -> canonical effort. OpenAI's `max` is the canonical `xhigh`.
import { RelayError } from '../../../core/plugin-api.ts';
import * as canonical from '../../../core/plugin-api/canonical.ts';

type Effort = canonical.ReasoningEffort;
const EFFORTS: Record<string, Effort> = {
  none: 'none', minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'xhigh', max: 'xhigh',
};

export function effortFromOpenAI(value: string, pointer: string): Effort {
  const effort = EFFORTS[value];
  if (!effort) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: must be one of ${Object.keys(EFFORTS).join(', ')}`, { field: pointer });
  }
  return effort;
}
