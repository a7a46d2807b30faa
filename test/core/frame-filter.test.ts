import t from 'tap';
import { MAX_EDITED_FRAME_CHARS, SseFrameFilter } from '../../core/pipeline/frame-filter.ts';

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

t.test('a frame too long to edit passes unedited as it comes, never held whole; the frames after it are edited again', async (t) => {
  const filter = new SseFrameFilter((_event, data) => data.replace(',"usage":null', ''));
  const long = `data: {"a":"${'x'.repeat(3 * MAX_EDITED_FRAME_CHARS)}","usage":null}\r\n\r\n`;
  const after = 'data: {"b":2,"usage":null}\n\n';
  const bytes = Buffer.from(long + after);
  const read = 64 * 1024 + 7;
  let out = '';
  let mostHeld = 0;
  for (let at = 0; at < bytes.length; at += read) {
    out += filter.push(bytes.subarray(at, at + read));
    // All ASCII: what went in and has not come out is what the filter holds.
    mostHeld = Math.max(mostHeld, Math.min(at + read, bytes.length) - out.length);
  }
  out += filter.end();
  t.equal(out, long + 'data: {"b":2}\n\n', 'the long frame as it came, the next one edited');
  t.ok(mostHeld <= MAX_EDITED_FRAME_CHARS + read, `at most the bound and a read held back (${mostHeld} bytes)`);

  for (const split of [1, 2, 3, 4, 5]) {
    const f = new SseFrameFilter((_event, data) => data.replace(',"usage":null', ''));
    const text = `data: ${'y'.repeat(MAX_EDITED_FRAME_CHARS + 10)}\r\n\r\n${after}`;
    const cut = text.indexOf('\r\n\r\n') + split - 1;
    const got = f.push(Buffer.from(text.slice(0, cut))) + f.push(Buffer.from(text.slice(cut))) + f.end();
    t.equal(got, text.replace(',"usage":null', ''), `the frame end split after ${split - 1} of its characters`);
  }
});

t.test('an unterminated frame too long to edit is passed at the end as it came', async (t) => {
  const filter = new SseFrameFilter(() => null);
  const text = `data: ${'z'.repeat(MAX_EDITED_FRAME_CHARS + 1)}`;
  t.equal(filter.push(Buffer.from(text)) + filter.end(), text);
});
