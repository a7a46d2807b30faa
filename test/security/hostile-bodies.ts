// fast-check arbitraries of hostile request bodies built from a valid one: a field set to a value
// of the wrong type (any JSON), deleted, nulled, or replaced by 10k levels of nesting or a huge
// string; unknown fields; invalid UTF-8 bytes; cut JSON; non-object JSON. Each body is the bytes
// to send, with a label saying what was done (for failure messages and counts).
import fc from 'fast-check';

export interface HostileBody {
  what: string;
  bytes: Buffer;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;

/** Every path to a value inside `value` (the root excluded), depth-first. */
export function pathsOf(value: Json, prefix: Path = []): Path[] {
  const out: Path[] = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...prefix, i], ...pathsOf(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...pathsOf(v, [...prefix, k]));
  }
  return out;
}

function clone<T extends Json>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** Sets (or, with `remove`, deletes) the value at `path` in a copy of `root`. */
function edit(root: Json, path: Path, value: Json | undefined): Json {
  const copy = clone(root);
  let node = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  const last = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else node[last] = value;
  return copy;
}

const SLOT = '\u0000__relay_fuzz_slot__';

/** JSON text of `root` with the value at `path` replaced by raw text (for what JSON.stringify cannot build). */
function withRawAt(root: Json, path: Path, raw: string): string {
  return JSON.stringify(edit(root, path, SLOT)).replace(JSON.stringify(SLOT), raw);
}

function deepNesting(levels: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

const INVALID_UTF8 = [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x28, 0x8c, 0xbc]), Buffer.from([0x80, 0x80])];

/** Hostile bodies derived from `valid` (a valid request of some wire shape). */
export function hostileBody(valid: Json): fc.Arbitrary<HostileBody> {
  const paths = pathsOf(valid);
  const path = fc.constantFrom(...paths);
  const objectPaths = paths.filter((p) => {
    const v = p.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], valid);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  });
  const text = (what: string, s: string): HostileBody => ({ what, bytes: Buffer.from(s, 'utf8') });
  const json = (what: string, v: Json): HostileBody => text(what, JSON.stringify(v));
  return fc.oneof(
    fc.record({ p: path, v: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> }).map(({ p, v }) => json(`set ${p.join('.')} to ${JSON.stringify(v).slice(0, 60)}`, edit(valid, p, v))),
    path.map((p) => json(`delete ${p.join('.')}`, edit(valid, p, undefined))),
    path.map((p) => json(`null at ${p.join('.')}`, edit(valid, p, null))),
    fc.record({ p: fc.constantFrom([] as Path, ...objectPaths), k: fc.string({ maxLength: 12 }), v: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json> })
      .map(({ p, k, v }) => json(`unknown field ${JSON.stringify(k)} at ${p.join('.') || '/'}`, edit(valid, [...p, k], v))),
    fc.record({ p: path, levels: fc.constantFrom(64, 1_000, 10_000), kind: fc.constantFrom<'array' | 'object'>('array', 'object') })
      .map(({ p, levels, kind }) => text(`${levels} nested ${kind}s at ${p.join('.')}`, withRawAt(valid, p, deepNesting(levels, kind)))),
    fc.record({ p: path, size: fc.constantFrom(64 * 1024, 1024 * 1024), ch: fc.constantFrom('a', 'é', '\u{1F600}', '\\u0000', '"') })
      .map(({ p, size, ch }) => text(`${size}-char string of ${JSON.stringify(ch)} at ${p.join('.')}`,
        withRawAt(valid, p, `"${(ch === '"' ? '\\"' : ch).repeat(Math.ceil(size / ch.length))}"`))),
    fc.record({ p: path, bad: fc.constantFrom(...INVALID_UTF8) }).map(({ p, bad }) => {
      const [before, after] = withRawAt(valid, p, '"x\u0001x"').split('\u0001');
      return { what: `invalid UTF-8 ${bad.toString('hex')} in a string at ${p.join('.')}`, bytes: Buffer.concat([Buffer.from(before), bad, Buffer.from(after)]) };
    }),
    fc.record({ p: path, esc: fc.constantFrom('\\ud800', '\\udfff', '\\ud83d\\u0041') }).map(({ p, esc }) => text(`lone surrogate ${esc} at ${p.join('.')}`, withRawAt(valid, p, `"a${esc}b"`))),
    fc.nat({ max: 200 }).map((n) => {
      const s = JSON.stringify(valid);
      return text(`JSON cut at ${n % s.length}`, s.slice(0, n % s.length));
    }),
    (fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>).map((v) => json(`a bare JSON value ${JSON.stringify(v).slice(0, 40)}`, v)),
    fc.constantFrom('', ' ', 'null', '[]', '"str"', '{', '{"model":', '\u00ef\u00bb\u00bf{}', '{"__proto__":{"polluted":1},"model":"x"}', '{"constructor":{"prototype":{"x":1}}}')
      .map((s) => text(`literal ${JSON.stringify(s)}`, s)),
  );
}
