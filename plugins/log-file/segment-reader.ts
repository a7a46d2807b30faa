// Reads over the segments, newest first and bounded. Events are appended when a request
// finishes, so within a segment lines run in finish order, and every event of a segment finished
// before the segment's mtime. A backward scan can therefore stop once no unread line can start
// later than what it already holds (allowing `orderSkewMs` for events recorded out of order).
import { SessionsBuilder, SummaryBuilder, TimeseriesBuilder, compareNewestFirst, decodeCursor, encodeCursor, isAfterCursor, matchesFilter, type ListPage, type ListQuery, type SessionSummary, type SessionsQuery, type Summary, type SummaryQuery, type TimeseriesPoint, type TimeseriesQuery } from '../../core/plugin-api/log-backends.ts';
import { type UsageEvent } from '../../core/plugin-api.ts';
import { ScanBudget, readLinesBackward, readLinesForward } from './read-lines.ts';
import { listSegments, type Segment } from './segments.ts';

export interface ReaderOptions {
  dir: string;
  maxScanBytes: number;
  orderSkewMs: number;
}

function parseEvent(line: string): UsageEvent | null {
  try {
    const value = JSON.parse(line) as UsageEvent;
    return typeof value?.request_id === 'string' && typeof value.started_at === 'string' ? value : null;
  } catch {
    return null; // a line cut by a failed write or by a write in progress
  }
}

/** Keeps the best `size` events in newest-first order. */
class TopEvents {
  readonly items: UsageEvent[] = [];

  constructor(private readonly size: number) {}

  add(event: UsageEvent): void {
    const items = this.items;
    if (items.length === this.size && compareNewestFirst(event, items[items.length - 1]) >= 0) return;
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareNewestFirst(items[mid], event) <= 0) lo = mid + 1;
      else hi = mid;
    }
    items.splice(lo, 0, event);
    if (items.length > this.size) items.pop();
  }

  /** started_at (ms) of the worst kept event once full, else null. */
  threshold(): number | null {
    return this.items.length === this.size ? Date.parse(this.items[this.items.length - 1].started_at) : null;
  }
}

export class SegmentReader {
  constructor(private readonly options: ReaderOptions) {}

  async list(query: ListQuery): Promise<ListPage> {
    const position = query.cursor ? decodeCursor(query.cursor) : null;
    const budget = new ScanBudget(this.options.maxScanBytes);
    const skew = this.options.orderSkewMs;
    const fromMs = query.from?.getTime() ?? null;
    // One more than a page, to know whether a next page exists.
    const top = new TopEvents(query.limit + 1);
    const seen = new Set<string>();
    for (const segment of await listSegments(this.options.dir)) {
      const threshold = top.threshold();
      if (threshold !== null && threshold > segment.mtimeMs + skew) break;
      if (fromMs !== null && segment.mtimeMs + skew < fromMs) break;
      let earliestFinish = Infinity;
      await readLinesBackward(segment.path, budget, (line) => {
        const event = parseEvent(line);
        if (!event) return true;
        earliestFinish = Math.min(earliestFinish, Date.parse(event.finished_at));
        if (!seen.has(event.request_id)) {
          seen.add(event.request_id);
          if ((!position || isAfterCursor(event, position)) && matchesFilter(event, query)) top.add(event);
        }
        const t = top.threshold();
        if (t !== null && t > earliestFinish + skew) return false;
        return fromMs === null || earliestFinish + skew >= fromMs;
      });
    }
    const items = top.items.slice(0, query.limit);
    const last = items[items.length - 1];
    return { items, nextCursor: top.items.length > query.limit && last ? encodeCursor(last) : null };
  }

  async get(requestId: string): Promise<UsageEvent | null> {
    // JSON.stringify writes request_id first, so a substring test skips parsing other lines.
    const needle = `{"request_id":${JSON.stringify(requestId)},`;
    const budget = new ScanBudget(this.options.maxScanBytes);
    let found: UsageEvent | null = null;
    for (const segment of await listSegments(this.options.dir)) {
      await readLinesBackward(segment.path, budget, (line) => {
        if (!line.startsWith(needle)) return true;
        found = parseEvent(line);
        return found === null;
      });
      if (found) return found;
    }
    return null;
  }

  async summary(query: SummaryQuery): Promise<Summary> {
    const builder = new SummaryBuilder(query);
    await this.scanWindow(query.from ?? null, (event) => builder.add(event));
    return builder.result();
  }

  async timeseries(query: TimeseriesQuery): Promise<TimeseriesPoint[]> {
    const builder = new TimeseriesBuilder(query);
    await this.scanWindow(query.from ?? null, (event) => builder.add(event));
    return builder.result();
  }

  async sessions(query: SessionsQuery): Promise<SessionSummary[]> {
    const builder = new SessionsBuilder(query);
    await this.scanWindow(query.from ?? null, (event) => builder.add(event));
    return builder.result();
  }

  /** Every event of the segments that can hold events started at or after `from`, once each. */
  private async scanWindow(from: Date | null, onEvent: (event: UsageEvent) => void): Promise<void> {
    const budget = new ScanBudget(this.options.maxScanBytes);
    const seen = new Set<string>();
    const segments: Segment[] = (await listSegments(this.options.dir))
      .filter((s) => from === null || s.mtimeMs + this.options.orderSkewMs >= from.getTime());
    const total = segments.reduce((n, s) => n + s.size, 0);
    if (total > this.options.maxScanBytes) budget.consume(total); // refuse before reading anything
    for (const segment of segments) {
      await readLinesForward(segment.path, segment.size, budget, (line) => {
        const event = parseEvent(line);
        if (!event || seen.has(event.request_id)) return;
        seen.add(event.request_id);
        onEvent(event);
      });
    }
  }
}

