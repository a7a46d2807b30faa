// log-file: usage events as JSONL on disk, the default usage backend.
import path from 'node:path';
import { Type, definePlugin } from '../../core/plugin-api.ts';
import { FileUsageBackend } from './file-usage-backend.ts';

export const LogFileOptions = Type.Object({
  dir: Type.String({ default: 'usage', description: 'Directory of the JSONL segments; relative paths are under the data directory.' }),
  maxFileBytes: Type.Integer({ minimum: 4096, default: 32 * 1024 * 1024, description: 'A segment rotates when it would grow past this size.' }),
  rotateDaily: Type.Boolean({ default: true, description: 'Also rotate at each UTC midnight.' }),
  retentionDays: Type.Integer({ minimum: 0, default: 30, description: 'Segments last written longer ago are deleted; 0 keeps everything.' }),
  maxScanBytes: Type.Integer({ minimum: 1024, default: 512 * 1024 * 1024, description: 'Most bytes one read query may scan; larger queries are refused with RELAY_ERR_QUERY_UNSUPPORTED.' }),
  orderSkewMs: Type.Integer({ minimum: 0, default: 5000, description: 'How far out of finish order events may be appended (the scan stops this much later).' }),
}, { additionalProperties: false });

export default definePlugin({
  name: 'log-file',
  kind: 'log',
  description: 'Usage events as JSONL files under the data directory, rotated by size and day; answers the logs and usage reads by scanning.',
  options: LogFileOptions,
  backends: () => ({ usage: ['file'] }),
  register(relay, options) {
    relay.hooks.addUsageBackend(new FileUsageBackend({ ...options, dir: path.resolve(relay.dataDir, options.dir) }));
  },
});
