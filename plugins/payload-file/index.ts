// payload-file: captured request and response bodies as files under the data directory.
import path from 'node:path';
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { FilePayloadBackend } from './file-payload-backend.ts';

export const PayloadFileOptions = Type.Object({
  dir: Type.String({ default: 'payloads', description: 'Directory of the payload files; relative paths are under the data directory.' }),
  retentionDays: Type.Integer({ minimum: 0, default: 30, description: 'Day folders older than this are deleted; 0 keeps everything.' }),
  minFreeBytes: Type.Integer({ minimum: 0, default: 268_435_456, description: 'Free space payloads leave on their file system, for usage records: a batch that would go below it is dropped, not retried; 0 turns the reserve off.' }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'payload-file',
  kind: 'payload',
  description: 'Captured payloads as one JSON file per request under the data directory.',
  options: PayloadFileOptions,
  backends: () => ({ payload: ['file'] }),
  register(relay, options) {
    relay.hooks.addPayloadBackend(new FilePayloadBackend({ dir: path.resolve(relay.dataDir, options.dir), retentionDays: options.retentionDays, minFreeBytes: options.minFreeBytes }));
  },
});
