// The default usage backend: JSONL segments on disk, rotated by size and day, read by scanning.
import path from 'node:path';
import type { ListPage, ListQuery, SessionSummary, SessionsQuery, Summary, SummaryQuery, TimeseriesPoint, TimeseriesQuery } from '../../core/plugin-api/log-backends.ts';
import type { UsageBackend, UsageEvent } from '../../core/plugin-api.ts';
import { SegmentReader } from './segment-reader.ts';
import { SegmentWriter } from './segment-writer.ts';

export interface FileUsageBackendOptions {
  /** Absolute directory of the segments. */
  dir: string;
  maxFileBytes: number;
  rotateDaily: boolean;
  retentionDays: number;
  maxScanBytes: number;
  orderSkewMs: number;
}

export class FileUsageBackend implements UsageBackend {
  readonly id = 'file';
  private readonly writer: SegmentWriter;
  private readonly reader: SegmentReader;

  constructor(options: FileUsageBackendOptions) {
    const dir = path.resolve(options.dir);
    this.writer = new SegmentWriter({ dir, maxFileBytes: options.maxFileBytes, rotateDaily: options.rotateDaily, retentionDays: options.retentionDays });
    this.reader = new SegmentReader({ dir, maxScanBytes: options.maxScanBytes, orderSkewMs: options.orderSkewMs });
  }

  // Serialized here, when the batch is written, so a request pays only for building its event.
  write(events: UsageEvent[]): Promise<void> {
    return this.writer.appendLines(events.map((e) => JSON.stringify(e)));
  }

  list(query: ListQuery): Promise<ListPage> {
    return this.reader.list(query);
  }

  get(requestId: string): Promise<UsageEvent | null> {
    return this.reader.get(requestId);
  }

  summary(query: SummaryQuery): Promise<Summary> {
    return this.reader.summary(query);
  }

  sessions(query: SessionsQuery): Promise<SessionSummary[]> {
    return this.reader.sessions(query);
  }

  timeseries(query: TimeseriesQuery): Promise<TimeseriesPoint[]> {
    return this.reader.timeseries(query);
  }

  close(): Promise<void> {
    return this.writer.closeCurrent();
  }
}
