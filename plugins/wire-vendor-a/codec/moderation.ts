// OpenAI's `moderation` asks OpenAI to screen the input and the answer. A translated route has no
// way to honour it (another vendor answers, and the canonical request cannot carry it), and an
// answer served without the screening asked for is not one to drop it for in silence: a 400.
import { unsupportedParameter } from '../../../core/plugin-api/canonical.ts';

export function refuseModeration(body: Record<string, unknown>, model: string): void {
  if (body.moderation !== undefined && body.moderation !== null) {
    throw unsupportedParameter('moderation', model, 'moderation runs inside OpenAI, and this route translates the request for another API; leave it out, or use a model whose binding passes the request through to OpenAI');
  }
}
