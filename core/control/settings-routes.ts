// GET/PUT /api/settings/usage-logging and /api/settings/payload-logging. A backend must be one
// whose plugin is loaded on this instance; the change reaches every instance through the
// settings table's NOTIFY, without a restart.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { Observer } from '../observer/observer.ts';
import type { SettingsStore } from '../settings/store.ts';
import type { PayloadLoggingSetting, UsageLoggingSetting } from '../settings/types.ts';
import { errorResponses } from './schemas.ts';

export const MAX_PAYLOAD_BYTES = 67_108_864;

const BackendId = Type.String({ minLength: 1, maxLength: 100, description: 'Id of a loaded backend plugin: file, clickhouse, postgres, valkey, s3 or an in-house id.' });

const UsageLogging = Type.Object({ backend: BackendId }, { additionalProperties: false });

const PayloadLoggingFields = {
  enabled: Type.Boolean({ description: 'Global master switch; nothing is captured while false.' }),
  backend: BackendId,
  maxBytes: Type.Integer({ minimum: 1, maximum: MAX_PAYLOAD_BYTES, description: 'Cap on each captured body, in bytes. Default 1 MiB.' }),
  viewersReadPayloads: Type.Boolean({ description: 'Whether users with the viewer role read captured bodies and headers (prompts may hold customer data). Default false: admins only.' }),
};

const PayloadLogging = Type.Object(PayloadLoggingFields, { additionalProperties: false });

/** Fields left out keep their current value. */
const PayloadLoggingChange = Type.Partial(Type.Object(PayloadLoggingFields), { additionalProperties: false });

function requireLoaded(kind: 'usage' | 'payload', backend: string, loaded: string[]): void {
  if (loaded.includes(backend)) return;
  const choices = loaded.length > 0 ? `loaded ${kind} backends: ${loaded.join(', ')}` : `no ${kind} backend is loaded`;
  throw new RelayError('RELAY_ERR_BACKEND_NOT_LOADED', `/backend: the ${kind} backend ${JSON.stringify(echoedName(backend))} is not loaded (add its plugin to the config); ${choices}`, { field: '/backend' });
}

export function registerSettingsRoutes(app: FastifyInstance, deps: { settings: SettingsStore; observer: Pick<Observer, 'backends'> }): void {
  const { settings, observer } = deps;
  const tags = ['settings'];

  app.get('/api/settings/usage-logging', {
    schema: { summary: 'Which backend receives usage events', operationId: 'get-usage-logging', tags, response: { 200: UsageLogging, ...errorResponses } },
  }, async () => settings.get('usage-logging'));

  app.put('/api/settings/usage-logging', {
    schema: {
      summary: 'Select the usage backend; takes effect on every instance without a restart', operationId: 'put-usage-logging', tags,
      body: UsageLogging, response: { 200: UsageLogging, ...errorResponses },
    },
  }, async (request) => {
    const body = request.body as UsageLoggingSetting;
    requireLoaded('usage', body.backend, observer.backends().usage);
    await settings.set('usage-logging', { backend: body.backend });
    return settings.get('usage-logging');
  });

  app.get('/api/settings/payload-logging', {
    schema: { summary: 'Payload capture: switch, backend and size cap', operationId: 'get-payload-logging', tags, response: { 200: PayloadLogging, ...errorResponses } },
  }, async () => settings.get('payload-logging'));

  app.put('/api/settings/payload-logging', {
    schema: {
      summary: 'Set payload capture; takes effect on every instance without a restart', operationId: 'put-payload-logging', tags,
      body: PayloadLoggingChange, response: { 200: PayloadLogging, ...errorResponses },
    },
  }, async (request) => {
    const body = request.body as Partial<PayloadLoggingSetting>;
    const next: PayloadLoggingSetting = { ...settings.get('payload-logging'), ...body };
    // A backend named now is checked; so is the current one when capture is being switched on.
    if (body.backend !== undefined || next.enabled) requireLoaded('payload', next.backend, observer.backends().payload);
    await settings.set('payload-logging', next);
    return settings.get('payload-logging');
  });
}
