// The schema of a Bedrock host's spec.options: the kernel checks it on every host write (a 400
// naming the option) and the dashboard's host form shows its fields.
import { Type, type Static } from '../../core/plugin-api.ts';

export const BedrockHostOptions = Type.Object({
  region: Type.String({
    pattern: '^[a-z]{2}(-[a-z]+)+-\\d+$', maxLength: 32,
    description: 'AWS region of the Bedrock runtime, e.g. us-east-1 (requests are signed for it).',
  }),
  endpoint: Type.Optional(Type.String({
    pattern: '^https?://[^/?#@]+(/[^?#]*)?$', maxLength: 2048,
    description: 'Bedrock runtime URL; default https://bedrock-runtime.{region}.amazonaws.com (a VPC endpoint, or a test double).',
  })),
  credentials: Type.Optional(Type.Union([Type.Literal('keys'), Type.Literal('chain')], {
    default: 'keys',
    description: 'keys: the host key holds ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN] (or a Bedrock API key); chain: the AWS credential chain of the Relay process (environment, web identity, instance role), the host key value unused.',
  })),
  storageLocations: Type.Optional(Type.Array(Type.String({
    pattern: '^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/([^?#]*/)?$', maxLength: 1024,
    description: 'An s3:// prefix ending in /, e.g. s3://shared-docs/ or s3://team-a/inputs/.',
  }), {
    maxItems: 100,
    description: "s3:// prefixes a caller may name as an image or document (Bedrock reads them with Relay's AWS identity, for whoever names them); any other s3:// location is refused (403). Default: none.",
  })),
}, { additionalProperties: false });

export type BedrockHostOptions = Static<typeof BedrockHostOptions>;

/** The runtime base URL of a host: its endpoint override, else AWS's regional endpoint. */
export function runtimeBaseUrl(options: BedrockHostOptions): string {
  return (options.endpoint ?? `https://bedrock-runtime.${options.region}.amazonaws.com`).replace(/\/+$/, '');
}
