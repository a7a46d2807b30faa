// OpenAI's `background: true` answers at once (status "queued", no usage) and generates afterwards,
// billed to the operator's host key. Passed through, Relay would record 0 tokens and never see the
// generation finish (nor proxy the polling), so budgets and token rate limits would not count it:
// refused there. A translated route answers synchronously, so it drops the member (x-relay-dropped).
import { RelayError, type InboundCodec } from '../../../core/plugin-api.ts';

export const refuseBackground: NonNullable<InboundCodec['checkPassthrough']> = (request) => {
  if (request.member('background') !== true) return;
  throw new RelayError('RELAY_ERR_BAD_REQUEST',
    'background: true is not served through Relay: the upstream would answer at once and generate afterwards, and Relay cannot meter (bill, budget or rate-limit) a generation it does not see finish. Send the request without it; stream: true keeps a long generation\'s connection alive.',
    { field: '/background' });
};
