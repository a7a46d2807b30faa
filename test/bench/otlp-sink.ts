// A sink for the bench's traced Relays: an OTLP/HTTP endpoint that answers every export with 200
// and an empty ExportTraceServiceResponse, counting requests and bytes without decoding them, so
// the figures carry Relay's cost of tracing and not a collector's.
import { createServer } from 'node:http';

export interface OtlpSink {
  /** Base URL for the otel plugin's `endpoint`. */
  url: string;
  exports: number;
  bytes: number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => { sink.bytes += chunk.length; });
    req.on('end', () => {
      sink.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sink: OtlpSink = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, exports: 0, bytes: 0,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return sink;
}
