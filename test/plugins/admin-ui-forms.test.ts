// The dashboard's entity forms: the payload they send (admin-ui/src/catalog/spec-payload.ts; an
// edit is merged into the stored spec, so a field the operator emptied must go out as null, which
// the API clears; left out, it kept its old value while the dashboard said "Saved"), and where in
// a field an API error points (fields.ts placeInField).
import t from 'tap';
import { specPayload } from '../../admin-ui/src/catalog/spec-payload.ts';

t.test('an edit sends null for the fields the operator emptied', async (t) => {
  const stored = { contextWindow: 128000, description: 'fast', reasoning: false, bindings: [] };
  const draft = { ...stored, contextWindow: undefined, description: '' };
  t.same(specPayload('models', draft, stored), { contextWindow: null, description: null, reasoning: false, bindings: [] });
  const host = { providerId: 'p', baseUrl: 'https://x.test', enabled: true, timeoutMs: 1000, headers: { 'x-debug': 'tok' } };
  t.same(specPayload('hosts', { ...host, headers: undefined }, host).headers, null, 'the last header removed');
});

t.test('a create leaves empty fields out; server-set and write-only fields are never nulled', async (t) => {
  t.same(specPayload('models', { contextWindow: undefined, description: '', reasoning: false, bindings: [] }), { reasoning: false, bindings: [] });
  const stored = { hostId: 'h', valueFrom: { kind: 'stored' }, hasValue: true, enabled: true, weight: 1 };
  const payload = specPayload('host-keys', { ...stored }, stored);
  t.notOk('hasValue' in payload);
  t.notOk('value' in payload, 'an untyped secret is not sent, not even as null');
});

t.test('an error inside a list field says which entry', async (t) => {
  const { placeInField } = await import('../../admin-ui/src/catalog/fields.ts');
  t.equal(placeInField('bindings', '/spec/bindings/1/hostId'), 'item 2, hostId');
  t.equal(placeInField('bindings', '/spec/bindings'), '', 'the field itself');
  t.equal(placeInField('headers', '/spec/headers/x~1a'), 'x/a', 'pointer escapes undone');
  t.equal(placeInField('valueFrom.env', '/spec/valueFrom/env'), '');
});
