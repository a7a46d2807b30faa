// Authenticates inference requests by relay key: `Authorization: Bearer <relay key>`, or
// `x-api-key: <relay key>` (what older Anthropic SDKs and curl users send).
import { definePlugin, Type, RelayError, type InboundRequest } from '../../core/plugin-api.ts';

function presentedKey(req: InboundRequest): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (!match) throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'The Authorization header must be "Bearer <relay key>".');
    return match[1];
  }
  const apiKey = req.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey !== '' ? apiKey : null;
}

export default definePlugin({
  name: 'auth-bearer',
  kind: 'auth',
  description: 'Relay keys as bearer tokens (or x-api-key) on inference requests.',
  options: Type.Object({
    order: Type.Integer({ default: 100, description: 'Position in the authentication chain; lower is asked first.' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addAuthenticator('auth-bearer', (req) => {
      const key = presentedKey(req);
      return key === null ? null : relay.principalForRelayKey(key);
    }, options.order);
  },
});
