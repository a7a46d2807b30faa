// String formats the catalog's TypeBox schemas use (uuid, date-time). TypeBox rejects a
// value whose format it does not know, so they must be registered before any check; this
// registers them once (core/http/validate.ts imports it), leaving any earlier registration alone.
import { FormatRegistry } from '@sinclair/typebox';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// RFC 3339 date-time, as JSON Schema's `date-time` format means it.
const DATE_TIME_RE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function registerStringFormats(): void {
  if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (value) => UUID_RE.test(value));
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (value) => DATE_TIME_RE.test(value) && !Number.isNaN(Date.parse(value)));
}

registerStringFormats();
