// Where the S3 credentials come from: the environment (the SDK's default chain, or variables
// named in the options) or sealed values opened with RELAY_MASTER_KEY. Never plaintext in config.
import { StartupError, Type, type Static } from '../../core/plugin-api.ts';

export const CredentialsOption = Type.Union([
  Type.Object({
    fromEnv: Type.Object({
      accessKeyId: Type.String({ description: 'Name of the environment variable holding the access key id.' }),
      secretAccessKey: Type.String({ description: 'Name of the environment variable holding the secret key.' }),
      sessionToken: Type.Optional(Type.String({ description: 'Name of the environment variable holding a session token.' })),
    }, { additionalProperties: false }),
  }, { additionalProperties: false }),
  Type.Object({
    sealed: Type.Object({
      accessKeyId: Type.String({ description: 'Sealed value (as host-key values are stored), opened with RELAY_MASTER_KEY.' }),
      secretAccessKey: Type.String({ description: 'Sealed value, opened with RELAY_MASTER_KEY.' }),
    }, { additionalProperties: false }),
  }, { additionalProperties: false }),
], { description: 'Unset: the AWS SDK default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, profiles, instance roles).' });

export type CredentialsOption = Static<typeof CredentialsOption>;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

function fromEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new StartupError(`payload-s3: environment variable ${name} is not set`);
  return value;
}

/** Resolves the option; undefined leaves it to the SDK's default chain. */
export function resolveCredentials(option: CredentialsOption | undefined, openSecret: (sealed: string) => string): S3Credentials | undefined {
  if (!option) return undefined;
  if ('fromEnv' in option) {
    const { accessKeyId, secretAccessKey, sessionToken } = option.fromEnv;
    return { accessKeyId: fromEnv(accessKeyId), secretAccessKey: fromEnv(secretAccessKey), ...(sessionToken ? { sessionToken: fromEnv(sessionToken) } : {}) };
  }
  return { accessKeyId: openSecret(option.sealed.accessKeyId), secretAccessKey: openSecret(option.sealed.secretAccessKey) };
}
