// Responses `store` is a boolean (null: the default, kept): anything else is a 400 naming /store,
// since a truthy string read as "keep it" would keep (and forward) what the client never meant to.
import { Type, validateBody } from '../../../core/plugin-api.ts';
import type { InboundCodec } from '../../../core/plugin-api.ts';

export const StoreFlag = Type.Union([Type.Boolean(), Type.Null()]);

/** Throws the schema's 400 (field /store) when `value` is neither absent, a boolean nor null. */
export function checkStore(value: unknown): void {
  if (value !== undefined) validateBody(StoreFlag, value, '/store');
}

/** The passthrough check: read with `member`, decided before the request is forwarded. */
export const checkStoreFlag: NonNullable<InboundCodec['checkPassthrough']> = (request) => checkStore(request.member('store'));
