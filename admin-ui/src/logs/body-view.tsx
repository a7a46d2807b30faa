// Shows a captured body: JSON pretty-printed, SSE as a list of events, anything else as text.
import { CopyButton } from '../ui/copy-button.tsx';
import { formatBytes } from '../format.ts';

interface SseEvent { event?: string; data: string }

function tryJson(text: string, indent = 2): string | null {
  const t = text.trim();
  if (!t || (t[0] !== '{' && t[0] !== '[')) return null;
  try { return JSON.stringify(JSON.parse(t), null, indent); } catch { return null; }
}

/** Splits SSE text into events (blank-line separated; `event:` and `data:` fields). */
export function parseSse(text: string): SseEvent[] | null {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (!lines.some((l) => l.startsWith('data:') || l.startsWith('event:'))) return null;
  const events: SseEvent[] = [];
  let current: { event?: string; data: string[] } = { data: [] };
  const flush = () => {
    if (current.event !== undefined || current.data.length > 0) events.push({ event: current.event, data: current.data.join('\n') });
    current = { data: [] };
  };
  for (const line of lines) {
    if (line === '') { flush(); continue; }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') current.event = value;
    else if (field === 'data') current.data.push(value);
  }
  flush();
  return events;
}

export function BodyView({ title, body, truncated }: { title: string; body: string | undefined; truncated: boolean | undefined }) {
  if (body === undefined || body === null) return null;
  const json = tryJson(body);
  const sse = json === null ? parseSse(body) : null;
  const size = new TextEncoder().encode(body).length;
  return (
    <section class="card body-card" aria-label={title}>
      <div class="card-head">
        <h2 class="card-title">{title}</h2>
        <div class="card-head-meta">
          <span class="muted small">{json !== null ? 'JSON' : sse ? `SSE · ${sse.length} events` : 'text'} · {formatBytes(size)}</span>
          {truncated && <span class="badge badge-amber" title="The body exceeded maxBytes and was cut">truncated</span>}
          <CopyButton text={body} />
        </div>
      </div>
      {truncated && <p class="field-note">Only the first {formatBytes(size)} were kept (payload logging maxBytes).</p>}
      {json !== null ? <pre class="code">{json}</pre>
        : sse ? (
          <ol class="sse-list">
            {sse.map((ev, i) => (
              <li key={i} class="sse-event">
                <div class="sse-meta"><span class="muted small">#{i + 1}</span>{ev.event && <code class="sse-name">{ev.event}</code>}</div>
                <pre class="code code-compact">{tryJson(ev.data, 0) ?? ev.data}</pre>
              </li>
            ))}
          </ol>
        ) : body === '' ? <p class="muted">Empty body.</p> : <pre class="code">{body}</pre>}
    </section>
  );
}
