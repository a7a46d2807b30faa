// Where a Bedrock request's credentials come from: the host key (static AWS keys, or a Bedrock
// API key sent as a bearer token), or the AWS credential chain of the Relay process.
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

type ChainFactory = typeof import('@aws-sdk/credential-providers').fromNodeProviderChain;
// Loaded on the first request that needs the chain (~12 MB of SDK a Relay without such a host never uses).
let chainFactory: Promise<ChainFactory> | null = null;
const loadChainFactory = (): Promise<ChainFactory> =>
  (chainFactory ??= import('@aws-sdk/credential-providers').then((m) => m.fromNodeProviderChain));

export type BedrockCredential =
  | { kind: 'sigv4'; identity: AwsCredentialIdentity }
  | { kind: 'bearer'; token: string };

/** A host key whose value is neither AWS keys nor a Bedrock API key: the key's fault, not the upstream's. */
export class MalformedHostKey extends Error {}

/**
 * A host key's value: `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]` signs with SigV4 (neither
 * part can hold a colon); a value without a colon is a Bedrock API key (a bearer token).
 */
export function parseHostKey(value: string): BedrockCredential {
  const trimmed = value.trim();
  if (!trimmed.includes(':')) return { kind: 'bearer', token: trimmed };
  const [accessKeyId, secretAccessKey, sessionToken, ...rest] = trimmed.split(':');
  if (!accessKeyId || !secretAccessKey || rest.length > 0 || sessionToken === '') {
    // The message never quotes the value: it is a secret.
    throw new MalformedHostKey('Relay did not send the request: the host key is not ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN] (nor a Bedrock API key, which has no colon)');
  }
  return { kind: 'sigv4', identity: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } };
}

// One provider per host: the chain caches and refreshes what it resolved (a web-identity or
// instance-role session), so a provider made per request would fetch credentials every time.
const chains = new Map<string, AwsCredentialIdentityProvider>();

/** The standard AWS credential chain for a host (environment, web identity for EKS, instance role, ...). */
export function chainFor(hostId: string): AwsCredentialIdentityProvider {
  let provider = chains.get(hostId);
  if (!provider) {
    let chain: AwsCredentialIdentityProvider | undefined;
    provider = async (props) => {
      chain ??= (await loadChainFactory())();
      return chain(props);
    };
    chains.set(hostId, provider);
  }
  return provider;
}
