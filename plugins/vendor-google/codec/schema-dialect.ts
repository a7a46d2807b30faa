// Gemini takes JSON schemas in two dialects: full JSON Schema (`parametersJsonSchema`,
// `responseJsonSchema`, the default here) or its older OpenAPI subset (`parameters`,
// `responseSchema`), which rejects keywords it does not know. For the subset, those keywords
// are removed, recursively.
export type SchemaDialect = 'json-schema' | 'openapi';

const OPENAPI_KEYWORDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
]);

/** Keeps only the OpenAPI-subset keywords Gemini's Schema object accepts. */
export function toOpenApiSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApiSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!OPENAPI_KEYWORDS.has(key)) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toOpenApiSchema(v)]));
    } else {
      out[key] = key === 'items' || key === 'anyOf' ? toOpenApiSchema(value) : value;
    }
  }
  return out;
}

export function schemaFields(dialect: SchemaDialect): { parameters: string; response: string } {
  return dialect === 'openapi'
    ? { parameters: 'parameters', response: 'responseSchema' }
    : { parameters: 'parametersJsonSchema', response: 'responseJsonSchema' };
}

export function schemaFor(dialect: SchemaDialect, schema: Record<string, unknown>): unknown {
  return dialect === 'openapi' ? toOpenApiSchema(schema) : schema;
}
