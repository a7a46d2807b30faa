// includesAnchored: a needle found by a short piece of it, then compared whole.
import t from 'tap';
import { includesAnchored } from '../../core/canonical/anchored-search.ts';

const FILE_ID = Buffer.from('"file_id"');
const has = (text: string) => includesAnchored(Buffer.from(text), FILE_ID, 5, 4);

t.test('found wherever the needle lies, missed when only the anchor is there', async (t) => {
  t.ok(has('"file_id":"x"'), 'at the start');
  t.ok(has('{"a":1,"tool_use_id":"t","source":{"file_id":"x"}}'), 'after anchors that are not it');
  t.ok(has('x"file_id"'), 'at the end');
  t.notOk(has('{"tool_use_id":"t","id":"x"}'), 'anchor without the needle');
  t.notOk(has('file_id" said in prose'), 'the needle cut at the start');
  t.notOk(has('{"text":"a \\"file_id\\" quoted"}'), 'escaped in a string');
  t.notOk(has(''), 'empty');
});
