// Which error a 400 names (core/http/validate.ts mostPreciseError): the deepest path; at one path
// a missing or unknown field first, then a broken constraint before a type mismatch; and a
// union's variants rather than "expected union value".
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { firstProblem } from '../../core/http/validate.ts';

const Ids = Type.Union([Type.Literal('*'), Type.Array(Type.String(), { maxItems: 3 })]);
const Spec = Type.Object({ modelIds: Ids, name: Type.String({ maxLength: 5 }) }, { additionalProperties: false });

t.test('a union names what is wrong with the variant the value is', async (t) => {
  t.same(firstProblem(Spec, { modelIds: ['a', 'b', 'c', 'd'], name: 'x' }), { pointer: '/modelIds', message: 'expected array length to be less or equal to 3' });
  t.same(firstProblem(Spec, { modelIds: ['a', 7], name: 'x' }), { pointer: '/modelIds/1', message: 'expected string' });
  t.same(firstProblem(Spec, { modelIds: '*', name: 'x' }), null);
});

t.test('unknown and missing fields, and constraints, come first at one path', async (t) => {
  t.same(firstProblem(Spec, { modelIds: '*', name: 'x', extra: 1 }), { pointer: '/extra', message: 'unknown field' });
  t.same(firstProblem(Spec, { name: 'x' }), { pointer: '/modelIds', message: 'is required' });
  t.same(firstProblem(Spec, { modelIds: '*', name: 'toolong' }), { pointer: '/name', message: 'expected string length less or equal to 5' });
});

// Host options of a vendor with two modes (vendor-google): a union discriminated by `mode`.
const Modes = Type.Union([
  Type.Object({ mode: Type.Optional(Type.Literal('gemini')) }, { additionalProperties: false }),
  Type.Object({ mode: Type.Literal('vertex'), project: Type.String({ pattern: '^[a-z]+$' }), location: Type.String() }, { additionalProperties: false }),
]);

t.test('a discriminated union names what is wrong in the variant its literal field picks', async (t) => {
  t.same(firstProblem(Modes, { mode: 'vertex', project: 'Acme!', location: 'x' }), { pointer: '/project', message: "expected string to match '^[a-z]+$'" },
    'not "unknown field /location" from the gemini variant');
  t.same(firstProblem(Modes, { mode: 'vertex', project: 'acme' }), { pointer: '/location', message: 'is required' });
  t.same(firstProblem(Modes, { mode: 'gemini', project: 'acme' }), { pointer: '/project', message: 'unknown field' });
  t.match(firstProblem(Modes, { mode: 'cloud' }), { pointer: '/mode' }, 'a value no variant has: the literal field itself');
  t.same(firstProblem(Modes, {}), null);
});
