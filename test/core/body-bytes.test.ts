// A request body kept as the chunks it came in (core/http/body-bytes.ts): joined only when read
// as one Buffer, written upstream as its parts, and an adapter that reads, assigns or spreads an
// UpstreamRequest's body sees the whole body and sends what it assigned.
import t from 'tap';
import { attachBody, BodyBytes, bytesOf, wireBody, wireLength } from '../../core/http/body-bytes.ts';

const parts = () => [Buffer.from('{"model":'), Buffer.from('"m","x":"'), Buffer.from('é"}')];
const whole = Buffer.concat(parts());

t.test('joined once, on the first ask; the parts are then that one Buffer', async (t) => {
  const bytes = new BodyBytes(parts(), whole.length);
  t.equal(bytes.parts.length, 3);
  const joined = bytes.joined();
  t.ok(joined.equals(whole));
  t.equal(bytes.joined(), joined, 'the same Buffer the second time');
  t.same(bytes.parts, [joined]);
  t.equal(new BodyBytes([], 0).joined().length, 0, 'an empty body');
  const one = Buffer.from('{}');
  t.equal(BodyBytes.of(one).joined(), one, 'a body of one part is that part, not a copy');
});

t.test('released: the parts are let go, and reading the body after says why it cannot', async (t) => {
  const bytes = new BodyBytes(parts(), whole.length);
  const request = { body: '' as Buffer | string };
  attachBody(request, bytes);
  bytes.release();
  t.throws(() => bytes.parts, /let go once its answer began/);
  t.throws(() => bytes.joined(), /let go once its answer began/);
  t.throws(() => wireBody(request), /let go/, 'nothing is sent from a body let go (not an empty one)');
  const one = BodyBytes.of(Buffer.from('{}'));
  one.release();
  t.throws(() => one.joined(), /let go/, 'a body of one part too');
});

t.test('an upstream request given parts: written as them, read, spread and assigned as one body', async (t) => {
  const request: { body: Buffer | string; headers: Record<string, string> } = { body: '', headers: { a: '1' } };
  const bytes = new BodyBytes(parts(), whole.length);
  attachBody(request, bytes);
  const wire = wireBody(request);
  t.ok(Array.isArray(wire), 'untouched, the parts go on the wire');
  t.equal((wire as readonly Buffer[]).length, 3);
  t.equal(wireLength(wire), whole.length);

  const copy = { ...request, headers: { b: '2' } };
  t.ok(Buffer.isBuffer(copy.body) && copy.body.equals(whole), 'a spread copies the whole body');
  t.ok(Buffer.isBuffer(wireBody(copy)) && (wireBody(copy) as Buffer).equals(whole), 'and the copy sends it');
  t.same(wireBody(request), [bytes.joined()], 'read once, the original sends the joined Buffer');

  request.body = '{"model":"renamed"}';
  t.equal(request.body, '{"model":"renamed"}');
  t.equal(wireBody(request), '{"model":"renamed"}', 'an assigned body is what goes on the wire');
  t.equal(wireLength(wireBody(request)), 19);
});

t.test('a body of one part is a plain Buffer property', async (t) => {
  const request = { body: '' as Buffer | string };
  const one = Buffer.from('{"model":"m"}');
  attachBody(request, BodyBytes.of(one));
  t.equal(request.body, one);
  t.equal(Object.getOwnPropertyDescriptor(request, 'body')?.value, one, 'no accessor');
  t.equal(wireBody(request), one);
});

t.test("a call's bytes: the routes' own parts, or any other call's body", async (t) => {
  const bytes = new BodyBytes(parts(), whole.length);
  t.equal(bytesOf({ body: whole, bytes } as { body: Buffer }), bytes);
  const plain = bytesOf({ body: whole });
  t.same(plain.parts, [whole]);
  t.equal(wireLength('é'), 2, 'a string counts its UTF-8 bytes');
});
