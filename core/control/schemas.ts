// TypeBox schemas of the control API's requests and responses, built from the catalog kinds
// (core/catalog/kinds.ts), so a field added to a kind appears in validation and OpenAPI alike.
import { OptionalKind, Type, TypeGuard, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { KINDS, type KindName } from '../catalog/kinds.ts';
import '../http/formats.ts';

export const ErrorResponse = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'A RELAY_ERR_* code.' }),
    message: Type.String(),
    type: Type.String(),
    status: Type.Integer(),
    field: Type.Optional(Type.String({ description: 'JSON pointer of the offending field, when there is one.' })),
  }),
}, { description: 'An error: {error:{code,message,type,status,field?}}' });

export const Metadata = Type.Object({
  id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  displayName: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const DisplayName = Type.String({ minLength: 1, maxLength: 200 });

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'The entity id.' }) });
export const RefParams = Type.Object({ ref: Type.String({ minLength: 1, description: 'Slug or id; a UUID-form ref prefers the id.' }) });

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page.' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive search in display name and slug.' })),
}, { additionalProperties: false });

function optionsOf(schema: TSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key !== 'properties' && key !== 'required' && key !== 'type' && key !== 'items' && key !== 'anyOf') out[key] = value;
  }
  return out;
}

/**
 * The schema a caller writes against: a field that has a default may be left out (the store
 * fills it in), at every depth. With `partial`, every top-level field is optional and carries no
 * default, since an update only names what changes.
 */
export function writableSchema(schema: TSchema, partial = false): TSchema {
  if (TypeGuard.IsObject(schema)) {
    const properties: Record<string, TSchema> = {};
    for (const [key, property] of Object.entries((schema as TObject).properties)) {
      let inner = writableSchema(property, false);
      if (partial && 'default' in inner) {
        const { default: _dropped, ...rest } = inner as TSchema & { default?: unknown };
        inner = rest as TSchema;
      }
      const declaredOptional = (property as unknown as Record<symbol, unknown>)[OptionalKind] === 'Optional' && !('default' in property);
      // In an update, null clears a field the spec may leave out (store.update removes it).
      if (partial && declaredOptional && !Value.Check(inner, null)) inner = Type.Union([inner, Type.Null()], { description: 'null removes it' });
      const optional = partial || declaredOptional || 'default' in property;
      properties[key] = optional ? Type.Optional(inner) : inner;
    }
    return Type.Object(properties, optionsOf(schema));
  }
  if (TypeGuard.IsArray(schema)) return Type.Array(writableSchema(schema.items), optionsOf(schema));
  if (TypeGuard.IsUnion(schema)) return Type.Union(schema.anyOf.map((s) => writableSchema(s)), optionsOf(schema));
  return schema;
}

/** A kind's spec as the API returns it: write-only fields never appear. */
export function publicSpecSchema(kind: KindName): TSchema {
  const def = KINDS[kind];
  const schema = def.schema as TObject;
  return def.writeOnlyFields.length > 0 ? Type.Omit(schema, def.writeOnlyFields) : schema;
}

export function entitySchema(kind: KindName): TSchema {
  return Type.Object({ metadata: Metadata, spec: publicSpecSchema(kind) }, { description: `A ${KINDS[kind].singular}.` });
}

export function listSchema(kind: KindName): TSchema {
  return Type.Object({
    items: Type.Array(entitySchema(kind)),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page.' }),
  });
}

export function createBodySchema(kind: KindName): TSchema {
  return Type.Object({
    metadata: Type.Object({
      displayName: DisplayName,
      slug: Type.Optional(Type.String({ description: 'Proposed slug; derived from displayName when left out.' })),
    }, { additionalProperties: false }),
    spec: writableSchema(KINDS[kind].schema),
  }, { additionalProperties: false });
}

export function updateBodySchema(kind: KindName): TSchema {
  return Type.Object({
    metadata: Type.Optional(Type.Object({ displayName: Type.Optional(DisplayName) }, { additionalProperties: false })),
    spec: Type.Optional(writableSchema(KINDS[kind].schema, true)),
  }, { additionalProperties: false, description: 'Only the fields given change; spec is merged into the stored one.' });
}

/** Error responses every control route documents. */
export const errorResponses = { '4xx': ErrorResponse, '5xx': ErrorResponse };

