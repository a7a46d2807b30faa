// Proxy mode (SPEC.md "Client integration: Messages-API agent client in proxy mode"): the relay
// key arrives in X-GW-API-Key, and with X-GW-Proxy-Mode on the client's own vendor credential is
// passed upstream untouched instead of a host key. Asked before auth-bearer, which would
// otherwise take the client's vendor key in x-api-key for a relay key.
import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createProxyAuthenticator } from './proxy-authenticator.ts';

export default definePlugin({
  name: 'auth-proxy',
  kind: 'auth',
  description: 'Relay key in X-GW-API-Key; proxy mode (X-GW-Proxy-Mode) passes the client\'s own vendor credential upstream.',
  options: Type.Object({
    enabled: Type.Boolean({ default: true, description: 'Accept proxy mode. When false, X-GW-API-Key still authenticates, and X-GW-Proxy-Mode: on is a 403.' }),
    prefixes: Type.Array(Type.String({ pattern: '^(/[A-Za-z0-9._~-]+)+$' }), {
      default: ['/vendor-b'],
      description: 'Path prefixes where proxy mode is accepted; an empty list accepts it on every inference path.',
    }),
    order: Type.Integer({ default: 50, description: 'Position in the authentication chain; must be before auth-bearer (100).' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addAuthenticator('auth-proxy', createProxyAuthenticator({
      enabled: options.enabled,
      prefixes: options.prefixes,
      principalForRelayKey: (plaintext) => relay.principalForRelayKey(plaintext),
    }), options.order);
  },
});
