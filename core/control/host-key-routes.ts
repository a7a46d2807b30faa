// Host keys: the upstream secret is either named by an environment variable (only the name is
// stored) or given once as spec.value, sealed with AES-GCM under RELAY_MASTER_KEY into the
// sealed_value column and never kept in the spec nor returned. Also GET /api/host-keys/health.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { HostKeySpec } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import type { HostKeyEnvironment } from '../crypto/host-key-env.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { CredentialResolver } from '../pipeline/credentials.ts';
import { missingValueHealth } from './missing-value-health.ts';
import type { KeyHealth } from '../pipeline/key-health.ts';
import type { SpecToStore, SpecWriter } from './catalog-routes.ts';
import { errorResponses } from './schemas.ts';

type ValueFrom = HostKeySpec['valueFrom'];

function badField(field: string, message: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${field}: ${message}`, { field });
}

export function hostKeyWriter(sealer: Sealer, env: HostKeyEnvironment): SpecWriter {
  const requireEnvName = (valueFrom: ValueFrom): void => {
    if (!valueFrom.env) throw badField('/spec/valueFrom/env', 'is required when valueFrom.kind is env');
    const refusal = env.refusal(valueFrom.env);
    if (refusal !== null) throw badField('/spec/valueFrom/env', refusal);
  };
  return {
    forCreate(input): SpecToStore {
      const { value, ...spec } = input as Record<string, unknown> & { value?: string; valueFrom: ValueFrom };
      const valueFrom = spec.valueFrom as ValueFrom;
      if (valueFrom.kind === 'env') {
        requireEnvName(valueFrom);
        if (value !== undefined) throw badField('/spec/value', 'is only accepted when valueFrom.kind is stored');
        return { spec };
      }
      if (valueFrom.env !== undefined) throw badField('/spec/valueFrom/env', 'is only used when valueFrom.kind is env');
      if (value === undefined) throw badField('/spec/value', 'is required when valueFrom.kind is stored');
      return { spec, secrets: { sealedValue: sealer.seal(value) } };
    },

    forUpdate(current: AnyEntity, patch): SpecToStore {
      const { value, ...spec } = patch as Record<string, unknown> & { value?: string };
      const valueFrom = (spec.valueFrom ?? (current.spec as HostKeySpec).valueFrom) as ValueFrom;
      if (valueFrom.kind === 'env') {
        requireEnvName(valueFrom);
        if (value !== undefined) throw badField('/spec/value', 'is only accepted when valueFrom.kind is stored');
        // Switching to an environment variable forgets the stored secret.
        return { spec, secrets: current.sealedValue ? { sealedValue: null } : undefined };
      }
      if (valueFrom.env !== undefined) {
        if (spec.valueFrom) throw badField('/spec/valueFrom/env', 'is only used when valueFrom.kind is env');
      }
      if (value !== undefined) return { spec, secrets: { sealedValue: sealer.seal(value) } };
      if (!current.sealedValue) throw badField('/spec/value', 'is required when valueFrom.kind is stored and no value is stored yet');
      return { spec };
    },
  };
}

const HealthItem = Type.Object({
  hostKeyId: Type.String({ format: 'uuid' }),
  state: Type.Union([Type.Literal('healthy'), Type.Literal('cooling'), Type.Literal('open'), Type.Literal('half-open'), Type.Literal('invalid'), Type.Literal('disabled')], {
    description: "cooling: after the upstream's 429, until retry-after. open: its own or its host's circuit opened after repeated 5xx, timeouts or refused connections; half-open: the next request probes it.",
  }),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'When a cooling key is tried again, or an open circuit lets a probe through.' })),
  reason: Type.Optional(Type.String()),
});

export function registerHostKeyHealthRoute(
  app: FastifyInstance,
  deps: { health: KeyHealth; sync: CatalogSync; sealer: Sealer; hostKeyEnv: HostKeyEnvironment },
): void {
  const withMissingValues = missingValueHealth(new CredentialResolver(deps.sealer, deps.hostKeyEnv));
  app.get('/api/host-keys/health', {
    schema: {
      summary: "Health of every host key as this instance sees it", operationId: 'host-key-health', tags: ['host-keys'],
      response: { 200: Type.Object({ items: Type.Array(HealthItem) }), ...errorResponses },
    },
  }, async () => {
    const snapshot = deps.sync.snapshot();
    return { items: withMissingValues(snapshot, deps.health.states(snapshot)) };
  });
}
