// An object serialized field by field once, for the Responses stream: every frame that carries
// the whole response (created, in_progress, then completed, incomplete or failed) echoes the
// request's instructions and tools, tens of KB from a coding agent, and only a few fields change
// between them. Measured with 12 Codex-like tools (test/bench/responses-encoder.ts): the encoder
// went from 166 to 129 us per stream (223 before the created frames shared one
// serialization), with the same bytes.

// Only the serialized fields are kept, not the object: a stream lasts minutes, and the echoed tools
// as objects were 22 of the 125 KB a translated Codex stream (16 tools) held past its first byte.
export class SerializedObject {
  private readonly fields: Array<{ key: string; json: string | undefined }> = [];

  constructor(base: Record<string, unknown>) {
    for (const key of Object.keys(base)) this.fields.push({ key, json: JSON.stringify(base[key]) });
  }

  /** The same text as JSON.stringify({ ...base, ...changes }), serializing only `changes` anew. */
  with(changes: Record<string, unknown> = {}): string {
    const added = Object.keys(changes).filter((key) => !this.fields.some((field) => field.key === key));
    // A new array-index key would sort before the others in the spread: not worth mimicking.
    if (added.some((key) => ARRAY_INDEX.test(key))) return JSON.stringify({ ...this.rebuilt(), ...changes });
    const parts: string[] = [];
    const add = (key: string, json: string | undefined) => {
      if (json !== undefined) parts.push(`${JSON.stringify(key)}:${json}`);
    };
    for (const { key, json } of this.fields) add(key, Object.hasOwn(changes, key) ? JSON.stringify(changes[key]) : json);
    for (const key of added) add(key, JSON.stringify(changes[key]));
    return `{${parts.join(',')}}`;
  }

  /** The base object again, from its serialized fields (keys in order, undefined ones included). */
  private rebuilt(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (const { key, json } of this.fields) object[key] = json === undefined ? undefined : JSON.parse(json);
    return object;
  }
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;
