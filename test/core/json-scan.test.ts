// The in-place JSON check (json-scan-wasm/) against JSON.parse on the same bytes: it accepts a body
// exactly when JSON.parse(body.toString('utf8')) gives an object, and the spans it gives hold the
// values JSON.parse keeps for those keys. Random documents written with random whitespace and
// escapes, then the same documents broken by one random edit, then the edge cases by hand.
import t from 'tap';
import fc from 'fast-check';
import { TopLevelMembers, type ValueSpan } from '../../core/http/json-scan-wasm/wasm-scanner.ts';
import { holdsEscapedLetter } from '../../core/canonical/escaped-letters.ts';
import { firstDuplicateKey, keptMembers } from '../../core/http/duplicate-keys.ts';

const KEYS = ['model', 'stream', 'é'];
/** Texts looked for in every string: one at the longest a slot holds, and one a single letter long. */
const WATCHED = ['file_id', 'item_reference', 'abcdefghijklmnop', 'x'];
const members = new TopLevelMembers(KEYS, WATCHED);
/** The spans, as the tests below read them (the last of a key written twice, as JSON.parse keeps). */
const scanner = { scan: (body: Buffer): Array<ValueSpan | null> | null => members.scan(body)?.spans ?? null };
const SCANNERS = [['WebAssembly', scanner]] as const;

/** What JSON.parse says of the bytes: the object it gives, or null for anything else (an error, an array, a scalar). */
function parsedObject(bytes: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}

/** Fails the test unless the scan of `bytes` agrees with JSON.parse. */
function agrees(bytes: Buffer): boolean {
  const expected = parsedObject(bytes);
  const spans = scanner.scan(bytes);
  if ((spans === null) !== (expected === null)) return false;
  if (spans === null || expected === null) return true;
  return KEYS.every((key, k) => {
    const span = spans[k];
    if (!Object.hasOwn(expected, key)) return span === null;
    return span !== null && JSON.stringify(JSON.parse(bytes.toString('utf8', span.start, span.end))) === JSON.stringify(expected[key]);
  });
}

// ---- random documents as text: random whitespace between tokens, random escapes in strings

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false),
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 1.5e-7)),
    fc.oneof(fc.string(), fc.constantFrom('model', 'stream', 'é', 'a"b', 'a\\b', '\u0000\u001f', '\ud800', '😀', ...WATCHED, 'file_ids', 'item_referencE')),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...KEYS, 'messages', ...WATCHED), fc.string({ maxLength: 4 })), tie('json')), { maxLength: 5 })
      .map((members) => Object.fromEntries(members) as Json),
  ),
}));

/** A tiny PRNG, so that one seed writes one text (fast-check shrinks the seed with the value). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** Object members a text was written with, and how many of them repeat a key of their object. */
interface Written { members: number; repeated: number }

/**
 * `escapes`: the share of characters written as \u escapes; `twice`: of objects with a key written
 * twice (counted in `written`, when given).
 */
function writeJson(value: Json, rnd: () => number, { escapes = 0.2, twice = 0.2 } = {}, written?: Written): string {
  const ws = () => (rnd() < 0.7 ? '' : [' ', '\n', '\r\n', '\t', '  '][Math.floor(rnd() * 5)]!);
  const str = (s: string) => {
    let out = '"';
    for (const ch of s) {
      const code = ch.codePointAt(0)!;
      const plain = JSON.stringify(ch).slice(1, -1);
      if (rnd() < escapes && code < 0x10000) {
        const hex = code.toString(16).padStart(4, '0');
        out += `\\u${rnd() < 0.5 ? hex : hex.toUpperCase()}`;
      }
      else if (ch === '/' && rnd() < 0.5) out += '\\/';
      else out += plain;
    }
    return `${out}"`;
  };
  const write = (v: Json): string => {
    if (v === null || typeof v === 'boolean' || typeof v === 'number') {
      const text = JSON.stringify(v);
      // An integer sometimes with an exponent: 5e0 is 5 to JSON.parse.
      return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 1e15 && rnd() < 0.2 ? `${text}e0` : text;
    }
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x)).join(`${ws()},${ws()}`)}${ws()}]`;
    const members = Object.entries(v).map(([k, x]) => `${str(k)}${ws()}:${ws()}${write(x)}`);
    // Sometimes a key twice (spelled with other escapes, maybe): JSON.parse keeps the last.
    if (members.length > 0 && rnd() < twice) {
      members.push(`${str(Object.keys(v)[0]!)}${ws()}:${ws()}${write(null)}`);
      if (written) written.repeated++;
    }
    if (written) written.members += members.length;
    return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
  };
  return ws() + write(value) + ws();
}

const documents = fc.tuple(json, fc.integer()).map(([value, seed]) => Buffer.from(writeJson(value, random(seed))));
const objects = fc.tuple(fc.array(fc.tuple(fc.constantFrom(...KEYS, 'messages', 'tools'), json), { maxLength: 6 }), fc.integer())
  .map(([members, seed]) => Buffer.from(writeJson(Object.fromEntries(members) as Json, random(seed))));

for (const [name] of SCANNERS) {
  t.test(`${name} scanner`, async (t) => {
    t.test('random documents: accepted exactly when JSON.parse gives an object, with the values it keeps', async (t) => {
      fc.assert(fc.property(fc.oneof(documents, objects), (bytes) => agrees(bytes)), { numRuns: 3000 });
      t.pass('3000 documents agree');
    });

    const EDIT_BYTES = [...'{}[]:,"\\ \t\n\r0123456789-+.eEtrufalsn/xu'].map((c) => c.charCodeAt(0)).concat([0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xa9, 0xff]);

    t.test('the same documents broken by one edit: still in agreement', async (t) => {
      const edited = fc.tuple(objects, fc.nat(), fc.constantFrom('delete', 'insert', 'replace'), fc.constantFrom(...EDIT_BYTES)).map(([bytes, at, how, byte]) => {
        const i = bytes.length === 0 ? 0 : at % bytes.length;
        const parts = [bytes.subarray(0, i), how === 'delete' ? Buffer.alloc(0) : Buffer.from([byte]), bytes.subarray(how === 'insert' ? i : i + 1)];
        return Buffer.concat(parts);
      });
      fc.assert(fc.property(edited, (bytes) => agrees(bytes)), { numRuns: 5000 });
      t.pass('5000 edited documents agree');
    });

    t.test('edge cases by hand', async (t) => {
      const cases: Array<[string, string | Buffer]> = [
        ['empty', ''],
        ['whitespace only', ' \n'],
        ['empty object', '{}'],
        ['object with spaces', ' { } '],
        ['array', '[{"model":"m"}]'],
        ['string', '"model"'],
        ['number', '12'],
        ['trailing comma', '{"model":"m",}'],
        ['trailing garbage', '{"model":"m"} x'],
        ['two documents', '{}{}'],
        ['a BOM first', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"model":"m"}')])],
        ['a key without a value', '{"model"}'],
        ['a key that is not a string', '{model:"m"}'],
        ['single quotes', "{'model':'m'}"],
        ['leading zero', '{"a":01}'],
        ['a lone minus', '{"a":-}'],
        ['a dot without digits', '{"a":1.}'],
        ['an exponent without digits', '{"a":1e+}'],
        ['numbers that are valid', '{"a":[-0,0.5,1E5,1e-5,-12.75E+3]}'],
        ['a short literal', '{"a":tru}'],
        ['a literal cut at the end', '{"a":nul'],
        ['a control character in a string', '{"model":"a\u0001b"}'],
        ['a raw newline in a string', '{"model":"a\nb"}'],
        ['DEL in a string', '{"model":"a\u007fb"}'],
        ['a bad escape', '{"model":"a\\x"}'],
        ['a short \\u escape', '{"model":"\\u12G4"}'],
        ['a lone surrogate escape', '{"model":"\\ud800"}'],
        ['an escaped key', '{"mod\\u0065l":"m"}'],
        ['a key twice', '{"model":"a","stream":true,"model":"b"}'],
        ['a nested key of the same name', '{"messages":{"model":"x"},"model":"m"}'],
        ['an unterminated string', '{"model":"m'],
        ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"model":"a'), Buffer.from([0xff, 0xc3]), Buffer.from('"}')])],
        ['a byte past 0x7f outside strings', Buffer.concat([Buffer.from('{"model":"a"'), Buffer.from([0xa0]), Buffer.from('}')])],
        ['non-ASCII text', '{"model":"café 😀","é":1}'],
      ];
      for (const [name, text] of cases) t.ok(agrees(Buffer.isBuffer(text) ? text : Buffer.from(text)), name);

      const deep = Buffer.from(`{"a":${'['.repeat(100_000)}${']'.repeat(100_000)},"model":"m"}`);
      t.ok(agrees(deep), '100,000 levels of nesting');
      t.ok(agrees(Buffer.from('{"a":[[[{"model":1}]]],"model":"m"}')), 'the next scan starts from a fresh stack');
      t.equal(scanner.scan(Buffer.from(`{"a":${'['.repeat(1000)}`)), null, 'unclosed nesting');
    });

    t.test('spans: where the values lie, and the last of a key written twice', async (t) => {
      const body = Buffer.from('{ "model" : "gpt" , "messages":[{"model":"inner"}], "stream":true, "model":"last" }');
      const [model, stream] = scanner.scan(body)!;
      t.equal(body.toString('utf8', model!.start, model!.end), '"last"');
      t.equal(body.toString('utf8', stream!.start, stream!.end), 'true');
    });

    t.test('strings read four or sixteen bytes at a time: a stopping byte in every lane, at every alignment', async (t) => {
      // The scans read string contents as 32-bit words (JavaScript) or 128-bit vectors
      // (WebAssembly), at any byte offset: each byte that ends a run (`"`, `\`, a control
      // character) must be found in each of a word's positions, bytes past 0x7f must not be taken
      // for one, and a body that is a view into a larger buffer (as a pooled Buffer is) must be
      // read from its own first byte.
      const inner = [0x22, 0x5c, 0x00, 0x0a, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xe0, 0xff];
      let checked = 0;
      let failed = 0;
      for (const byte of inner) {
        for (let before = 0; before < 18; before++) {
          for (const after of [0, 1, 2, 3, 4, 7, 15, 16, 17]) {
            const text = Buffer.concat([Buffer.from('{"model":"'), Buffer.alloc(before, 0x61), Buffer.from([byte]), Buffer.alloc(after, 0x62), Buffer.from('","stream":true}')]);
            for (let offset = 0; offset < 4; offset++) {
              const pooled = Buffer.alloc(text.length + 8, 0x20);
              text.copy(pooled, offset);
              checked++;
              if (!agrees(pooled.subarray(offset, offset + text.length))) failed++;
            }
          }
        }
      }
      t.equal(failed, 0, `${checked} bodies agree with JSON.parse`);
      // An escape right at the end of a word, and a string that ends within the body's last four bytes.
      for (const text of ['{"model":"abc\\"def"}', '{"model":"ab\\\\"}', '{"a":"abcdefg\\u00e9h","model":"m"}', '{"model":"x"}', '{"model":"abcd']) {
        t.ok(agrees(Buffer.from(text)), text);
      }
    });

    t.test('escapes at every place in and across sixteen-byte blocks', async (t) => {
      // The WebAssembly scan takes every stop of a block from one read, and an escape may end in
      // the next block (`\"` split, or a \u escape's hex digits): each escape, valid or not, at
      // each offset from the string's start, followed by more stops or none.
      const escapes = ['\\n', '\\"', '\\\\', '\\/', '\\u00e9', '\\uD83D\\ude00', '\\u12G4', '\\x', '\\', '"'];
      const tails = ['', 'abc', '\\t\\t\\t', '\\u0041'.repeat(3), 'x'.repeat(20)];
      let checked = 0;
      let failed = 0;
      for (const escape of escapes) {
        for (let before = 0; before < 34; before++) {
          for (const tail of tails) {
            checked++;
            if (!agrees(Buffer.from(`{"stream":false,"model":"${'a'.repeat(before)}${escape}${tail}","é":1}`))) failed++;
          }
        }
      }
      t.equal(failed, 0, `${checked} bodies agree with JSON.parse`);
    });
  });
}

t.test('a key written twice is reported, whichever key it is', async (t) => {
  t.equal(members.scan(Buffer.from('{"model":"a","stream":true,"model":"b"}'))?.duplicate, 'model');
  t.equal(members.scan(Buffer.from('{"stream":true,"model":"a","stream":false}'))?.duplicate, 'stream');
  t.equal(members.scan(Buffer.from('{"model":"a","mod\\u0065l":"b"}'))?.duplicate, 'model', 'the same key written with an escape');
  t.equal(members.scan(Buffer.from('{"model":"a","messages":[{"model":"b"}],"x":1,"x":2}'))?.duplicate, null, 'nested keys and keys not read do not count');
});

t.test('the WebAssembly scanner', async (t) => {
  t.test('the committed module is what scanner.wat compiles to', async (t) => {
    const { compileScanner } = await import('../support/compile-wat.ts');
    const { SCANNER_WASM_BASE64 } = await import('../../core/http/json-scan-wasm/scanner-binary.ts');
    t.equal(Buffer.from(await compileScanner()).toString('base64'), SCANNER_WASM_BASE64, 'run `npm run build:wasm` after editing scanner.wat');
  });

  t.test('a body bigger than the memory it keeps: scanned, then the memory given back', async (t) => {
    const own = new TopLevelMembers(KEYS);
    const memory = () => (own as unknown as { exports: { memory: { buffer: ArrayBuffer } } }).exports.memory.buffer.byteLength;
    const before = memory();
    const big = Buffer.from(`{"messages":["${'x\\n'.repeat(2_000_000)}"],"model":"big","stream":true}`);
    const spans = own.scan(big)!.spans;
    t.equal(big.toString('utf8', spans[0]!.start, spans[0]!.end), '"big"', 'the 6 MB body is read');
    t.equal(memory(), before, 'the memory it grew to (12 MB and more) is not kept');
    const small = Buffer.from('{"model":"small","stream":false}');
    const [model, stream] = own.scan(small)!.spans;
    t.equal(small.toString('utf8', model!.start, model!.end), '"small"');
    t.equal(small.toString('utf8', stream!.start, stream!.end), 'false', 'and the next body is read in fresh memory');
    t.equal(own.scan(Buffer.from(`{"model":"a"${'x'.repeat(1000)}`)), null, 'a body that is not JSON after one that was');
  });

});

/** Every string JSON.parse reads from `value`, keys and values, at any depth. */
function stringsIn(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') out.add(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      stringsIn(v, out);
    }
  }
  return out;
}

t.test('watched texts: seen in any string at any depth, or an escaped letter said', async (t) => {
  // Sound: a text JSON.parse reads anywhere is seen, or the body holds an escaped letter (which
  // could spell it). Exact: seen only when the body holds the text as a whole string, written
  // plainly; the escaped letter only when the body holds one.
  const watchedAgree = (bytes: Buffer): boolean => {
    const scan = members.scan(bytes);
    const parsed = parsedObject(bytes);
    if (scan === null || parsed === null) return true;
    const strings = stringsIn(parsed);
    return WATCHED.every((text, k) => {
      const seen = (scan.seen & (1 << k)) !== 0;
      if (strings.has(text) && !seen && !scan.escapedLetter) return false;
      return !seen || bytes.includes(`"${text}"`);
    }) && scan.escapedLetter === (scan.escapedLetter && holdsEscapedLetter(bytes));
  };
  fc.assert(fc.property(objects, (bytes) => watchedAgree(bytes)), { numRuns: 3000 });

  const seen = (text: string) => {
    const scan = members.scan(Buffer.from(text))!;
    return WATCHED.filter((_, k) => (scan.seen & (1 << k)) !== 0);
  };
  t.same(seen('{"model":"m","messages":[{"content":[{"source":{"type":"file","file_id":"f_1"}}]}]}'), ['file_id'], 'a key five levels deep');
  t.same(seen('{"input":[{"type":"item_reference","id":"msg_1"}]}'), ['item_reference'], 'a value');
  t.same(seen('{"a":"abcdefghijklmnop","b":"x"}'), ['abcdefghijklmnop', 'x'], 'sixteen letters, and one');
  t.same(seen('{"a":"file_ids","b":"file_i","item_referencex":1,"c":"abcdefghijklmnopq","d":"xx","e":"Item_reference"}'), [], 'longer, shorter, or another case: not seen');
  t.same(seen('{"a":"a file_id b"}'), [], 'inside a longer string: not seen');
  t.same(seen('{"model":"m"}'), [], 'the next scan starts with nothing seen');
  t.equal(members.scan(Buffer.from('{"a":"fil\\u0065_id"}'))!.escapedLetter, true, 'an escaped e');
  t.equal(members.scan(Buffer.from('{"a":"item\\u005Freference"}'))!.escapedLetter, true, 'an escaped _, upper-case hex');
  t.equal(members.scan(Buffer.from('{"a":"caf\\u00e9 \\u003cb\\u003e \\u4e2d \\\\u0041"}'))!.escapedLetter, false, 'an accent, Go\'s HTML escapes, CJK, an escaped backslash before u0041');
  t.equal(members.scan(Buffer.from('{"model":"m"}'))!.escapedLetter, false, 'the next scan starts with no escape');
  t.throws(() => new TopLevelMembers([], ['file-id']), /cannot be watched/, 'a text with a character other than a letter or _');
  t.throws(() => new TopLevelMembers([], ['abcdefghijklmnopq']), /cannot be watched/, 'seventeen letters');
  t.throws(() => new TopLevelMembers([], ['a', 'b', 'c', 'd', 'e']), /at most 4/, 'five texts');
});

/** Whether JSON.parse reads, at any depth, a reasoning item naming its id without encrypted content. */
function namesReasoningById(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(namesReasoningById);
  if (value === null || typeof value !== 'object') return false;
  const o = value as Record<string, unknown>;
  if (o.type === 'reasoning' && typeof o.id === 'string' && o.id !== '' && !(typeof o.encrypted_content === 'string' && o.encrypted_content !== '')) return true;
  return Object.values(o).some(namesReasoningById);
}

t.test('reasoning items named by id alone: noted wherever JSON.parse reads one, or an escaped letter said', async (t) => {
  // Items of `type`, `id` and maybe `encrypted_content` members (sometimes another value, or a key
  // twice), in any order, nested at any depth, written with few or no escapes.
  const MEMBER = fc.oneof(fc.constantFrom<Json>('reasoning', 'rs_1', '', 'gAAAA', null, 5, ['x'], { id: 'rs_2', type: 'reasoning' }), json);
  const item = fc.tuple(
    fc.constantFrom<Json>('reasoning', 'reasoning', 'message', 'reasoninG'),
    fc.oneof(fc.constantFrom<Json>('rs_1', ''), MEMBER),
    fc.option(fc.oneof(fc.constantFrom<Json>('gAAAA', ''), MEMBER), { nil: undefined }),
    fc.array(fc.tuple(fc.constantFrom('type', 'id', 'encrypted_content', 'summary', 'x'), MEMBER), { maxLength: 3 }),
    fc.nat(2),
  ).map(([type, id, encrypted, more, depth]) => ({ members: [['type', type], ['id', id], ...(encrypted === undefined ? [] : [['encrypted_content', encrypted]]), ...more] as Array<[string, Json]>, depth }));
  const bodies = fc.tuple(fc.array(item, { minLength: 1, maxLength: 4 }), fc.integer(), fc.constantFrom(0, 0, 0.03, 0.2), fc.boolean()).map(([items, seed, escapes, once]) => {
    const rnd = random(seed);
    const options = { escapes, twice: once ? 0 : 0.2 };
    const texts = items.map(({ members, depth }) => {
      const kept = once ? [...new Map(members).entries()] : members;
      kept.sort(() => rnd() - 0.5);
      let text = `{${kept.map(([k, v]) => `${writeJson(k, rnd, options)}:${writeJson(v, rnd, options)}`).join(',')}}`;
      for (let d = 0; d < depth; d++) text = rnd() < 0.5 ? `[${text}]` : `{"content":${text}}`;
      return text;
    });
    // Exact: no escape and no key twice, so the scan reads each item as JSON.parse does.
    return { bytes: Buffer.from(`{"model":"m","input":[${texts.join(',')}]}`), exact: escapes === 0 && once };
  });
  let named = 0;
  let exact = 0;
  fc.assert(fc.property(bodies, ({ bytes, exact: plain }) => {
    const scan = members.scan(bytes);
    const parsed = parsedObject(bytes);
    const expected = namesReasoningById(parsed);
    if (scan === null) return parsed === null; // a key `":"` written twice is cut at its colon
    if (expected) named++;
    if (plain) exact++;
    // Sound: one JSON.parse reads is noted (or an escape could spell one); exact when nothing could.
    if (expected && !scan.reasoningById && !scan.escapedLetter) return false;
    return !plain || scan.reasoningById === expected;
  }), { numRuns: 3000 });
  t.ok(named > 300 && exact > 300, `${named} of 3000 bodies name one, ${exact} are compared exactly`);

  const noted = (text: string) => members.scan(Buffer.from(text))!.reasoningById;
  for (const [text, expected, why] of [
    ['{"input":[{"type":"reasoning","id":"rs_1","summary":[]}]}', true, 'an id alone'],
    ['{"input":[{"encrypted_content":"gAAA","summary":[{"type":"summary_text","text":"x"}],"id":"rs_1","type":"reasoning"}]}', false, 'with encrypted content, in any order'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":""}]}', true, 'an empty encrypted_content'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":null}]}', true, 'a null one'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":["x"]}]}', true, 'an array'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":{"a":"x"}}]}', true, 'an object holding a string'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"x","encrypted_content":""}]}', true, 'encrypted_content twice, the last empty'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"","encrypted_content":"x"}]}', true, 'twice, the first empty (a parser may keep it)'],
    ['{"input":[{"id":"rs_1","x":[{"encrypted_content":"e"}],"type":"reasoning"}]}', true, 'encrypted content of a nested object is not the item\'s'],
    ['{"input":[{"type":"reasoning","x":{"id":"rs_1"}}]}', false, 'an id of a nested object is not the item\'s'],
    ['{"input":[{"type":"reasoning","id":""}]}', false, 'an empty id'],
    ['{"input":[{"type":"reasoning","id":5}]}', false, 'an id that is not a string'],
    ['{"input":[{"type":["reasoning"],"id":"rs_1"},{"type":"x","a":["reasoning"],"id":"rs_1"}]}', false, '"reasoning" not as the type'],
    ['{"a":{"b":[[{"type":"reasoning","id":"rs_1"}]]}}', true, 'at any depth'],
    ['{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"e"}],"more":[{"type":"reasoning","id":"rs_2"}]}', true, 'one of two'],
    ['{"model":"m"}', false, 'the next scan starts with none noted'],
  ] as const) {
    t.equal(noted(text), expected, why);
  }
  t.equal(members.scan(Buffer.from('{"input":[{"type":"reasonin\\u0067","id":"rs_1"}]}'))!.escapedLetter, true, 'an escaped spelling is said');
});

t.test('members counted as written: JSON.parse keeps fewer exactly when an object repeats a key, however spelled', async (t) => {
  // The scan counts every object member it reads (MemberScan.memberCount), and each top-level
  // member's value's (ValueSpan.memberCount); the writer knows how many it wrote and how many
  // repeat a key of their object. Keys are escaped at random, so a repeat is often spelled otherwise.
  const bodies = fc.tuple(fc.array(fc.tuple(fc.constantFrom(...KEYS, 'messages', 'input'), json), { maxLength: 6 }), fc.integer(), fc.constantFrom(0, 0.2, 0.5), fc.constantFrom(0, 0.1, 0.3))
    .map(([entries, seed, escapes, twice]) => {
      const written: Written = { members: 0, repeated: 0 };
      const bytes = Buffer.from(writeJson(Object.fromEntries(entries) as Json, random(seed), { escapes, twice }, written));
      return { bytes, written };
    });
  let repeated = 0;
  fc.assert(fc.property(bodies, ({ bytes, written }) => {
    const scan = members.scan(bytes);
    if (scan === null) return false;
    const text = bytes.toString('utf8');
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (written.repeated > 0) repeated++;
    // Fewer, not fewer by the repeats: an earlier value's members go with it.
    if (scan.memberCount !== written.members || (keptMembers(parsed) < written.members) !== (written.repeated > 0)) return false;
    // The refusal's locator finds one exactly when there is one.
    if ((firstDuplicateKey(text, '') !== null) !== (written.repeated > 0)) return false;
    // Each read member's value: fewer kept than counted exactly when a key repeats inside it.
    return KEYS.every((key, k) => {
      const span = scan.spans[k];
      if (!span) return true;
      const inner = bytes.toString('utf8', span.start, span.end);
      return (keptMembers(JSON.parse(inner)) !== span.memberCount) === (firstDuplicateKey(inner, '') !== null);
    });
  }), { numRuns: 3000 });
  t.ok(repeated > 300, `${repeated} of 3000 bodies repeat a key`);

  const counted = (text: string) => members.scan(Buffer.from(text))!.memberCount;
  t.equal(counted('{}'), 0, 'an empty object');
  t.equal(counted('{"a":[{"b":1,"c":{}},{"b":2}],"d":{"e":{"f":null}}}'), 7, 'every member at any depth, the outermost object\'s too');
  t.equal(counted('{"a":"{\\"b\\":1}"}'), 1, 'not the braces and colons of a string');
  t.equal(counted('{"x":1}'), 1, 'the next scan counts from zero');
  const spans = members.scan(Buffer.from('{"model":{"a":1,"a":2},"stream":[{"b":{"c":1}}],"é":3}'))!.spans;
  t.same(spans.map((s) => s?.memberCount), [2, 2, 0], 'each read member\'s value, a key written twice counted twice');
  // Two keys of other invalid UTF-8 bytes are one key to JSON.parse (both U+FFFD): a repeat too.
  const invalid = Buffer.concat([Buffer.from('{"'), Buffer.from([0xff]), Buffer.from('":1,"'), Buffer.from([0xfe]), Buffer.from('":2}')]);
  t.equal(members.scan(invalid)!.memberCount, 2);
  t.equal(keptMembers(JSON.parse(invalid.toString('utf8'))), 1);
  t.same(firstDuplicateKey(invalid.toString('utf8'), ''), { key: '\ufffd', pointer: '' }, 'found as JSON.parse reads it');
});

t.test('the first key written twice and where, as JSON.parse reads keys', async (t) => {
  for (const [text, expected, why] of [
    ['{"input":[{"type":"message"},{"type":"item_reference","type":"message"}]}', { key: 'type', pointer: '/input/1' }, 'in an array\'s second object'],
    ['{"input":[{"type":"item_reference","t\\u0079pe":"message"}]}', { key: 'type', pointer: '/input/0' }, 'spelled with an escape'],
    ['{"a/b":{"~":{"k":1,"k":2}}}', { key: 'k', pointer: '/a~1b/~0' }, 'a pointer with / and ~ escaped'],
    ['{"messages":1,"x":{},"messages":2}', { key: 'messages', pointer: '' }, 'at the top'],
    ['{"a":"{\\"k\\":1,\\"k\\":2}","b":[{"k":1},{"k":2}],"c":{"k":{"k":1}}}', null, 'a key in strings, in two objects, nested in itself: none'],
    ['{"a":[[],[{"x":1}],{"y":[1,{"z":1,"z":2}]}]}', { key: 'z', pointer: '/a/2/y/1' }, 'arrays in arrays'],
  ] as const) {
    t.same(firstDuplicateKey(text, ''), expected, why);
  }
  t.same(firstDuplicateKey('[{"id":"a","id":"b"}]', '/input'), { key: 'id', pointer: '/input/0' }, 'under a member\'s pointer');
});
