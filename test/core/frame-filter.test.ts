import t from 'tap';
import { SseFrameFilter } from '../../core/pipeline/frame-filter.ts';

const frames = ['data: {"a":1}\n\n', 'event: x\ndata: hide me\n\n', 'data: {"b":2}\r\n\r\n', 'data: [DONE]\n\n'];
const text = frames.join('');

t.test('hidden frames are dropped and the rest pass unchanged, however the bytes are split', async (t) => {
  for (let size = 1; size <= text.length; size += 3) {
    const filter = new SseFrameFilter((_event, data) => (data === 'hide me' ? null : data));
    let out = '';
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) out += filter.push(bytes.subarray(i, i + size));
    out += filter.end();
    t.equal(out, frames[0] + frames[2] + frames[3], `chunks of ${size} bytes`);
  }
});

t.test('a multi-byte character split across chunks survives', async (t) => {
  const filter = new SseFrameFilter((_event, data) => data);
  const bytes = Buffer.from('data: héllo\n\n');
  const out = filter.push(bytes.subarray(0, 8)) + filter.push(bytes.subarray(8)) + filter.end();
  t.equal(out, 'data: héllo\n\n');
});

t.test('an unterminated last frame is passed on at the end unless hidden', async (t) => {
  const keep = new SseFrameFilter((_event, data) => data);
  t.equal(keep.push(Buffer.from('data: tail')) + keep.end(), 'data: tail');
  const hide = new SseFrameFilter(() => null);
  t.equal(hide.push(Buffer.from('data: tail')) + hide.end(), '');
});

t.test('an edited frame keeps its other lines; an unedited one is passed as it came', async (t) => {
  const filter = new SseFrameFilter((_event, data) => data.replace(',"usage":null', ''));
  const out = filter.push(Buffer.from('id: 7\nevent: chunk\ndata: {"a":1,"usage":null}\n\ndata:  {"b":2}\r\n\r\n'));
  t.equal(out, 'id: 7\nevent: chunk\ndata: {"a":1}\n\ndata:  {"b":2}\r\n\r\n');
});
