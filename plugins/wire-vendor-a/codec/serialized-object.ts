// An object serialized field by field once, for the Responses stream: every frame that carries
// the whole response (created, in_progress, then completed, incomplete or failed) echoes the
// request's instructions and tools, tens of KB from a coding agent, and only a few fields change
// between them, so it is serialized once (test/bench/RESULTS.md, the Responses encoder).

// Only the serialized fields are kept, not the object: a stream lasts minutes, and the echoed tools
// as objects were 22 of the 125 KB a translated Codex stream (16 tools) held past its first byte.
export class SerializedObject {
  private readonly keys: string[];
  /** `"key":value` for each key, or undefined where the value serializes to nothing. */
  private readonly members: Array<string | undefined>;
  /** with() without changes, made on its first call (the created and in_progress frames share it). */
  private unchanged: string | undefined;

  constructor(base: Record<string, unknown>) {
    this.keys = Object.keys(base);
    this.members = this.keys.map((key) => member(key, base[key]));
  }

  /** The same text as JSON.stringify({ ...base, ...changes }), serializing only `changes` anew. */
  with(changes?: Record<string, unknown>): string {
    if (changes === undefined) return (this.unchanged ??= `{${this.members.filter((m) => m !== undefined).join(',')}}`);
    // Members joined by hand, the unchanged text kept (test/bench/RESULTS.md).
    let out = '';
    for (let i = 0; i < this.keys.length; i++) {
      const key = this.keys[i]!;
      const m = Object.hasOwn(changes, key) ? member(key, changes[key]) : this.members[i];
      if (m !== undefined) out = out === '' ? m : `${out},${m}`;
    }
    for (const key of Object.keys(changes)) {
      if (this.keys.includes(key)) continue;
      // A new array-index key would sort before the others in the spread: not worth mimicking.
      if (ARRAY_INDEX.test(key)) return JSON.stringify({ ...this.rebuilt(), ...changes });
      const m = member(key, changes[key]);
      if (m !== undefined) out = out === '' ? m : `${out},${m}`;
    }
    return `{${out}}`;
  }

  /** The base object again, from its serialized fields (keys in order, undefined ones included). */
  private rebuilt(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    this.keys.forEach((key, i) => {
      const m = this.members[i];
      object[key] = m === undefined ? undefined : JSON.parse(`{${m}}`)[key];
    });
    return object;
  }
}

function member(key: string, value: unknown): string | undefined {
  const json = JSON.stringify(value);
  return json === undefined ? undefined : `${JSON.stringify(key)}:${json}`;
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;
