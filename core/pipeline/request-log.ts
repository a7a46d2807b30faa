// A request's logger: its lines name the request (and the client's own id when it sent one). The
// pino child is made on the first line, since most requests never log one.
import type { Logger } from 'pino';

export class RequestLog {
  private child: Logger | null = null;

  constructor(private readonly log: Logger, private readonly requestId: string, private readonly clientRequestId: string | null) {}

  warn(fields: Record<string, unknown>, message: string): void {
    this.logger().warn(fields, message);
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.logger().error(fields, message);
  }

  private logger(): Logger {
    this.child ??= this.log.child(this.clientRequestId === null
      ? { reqId: this.requestId }
      : { reqId: this.requestId, clientRequestId: this.clientRequestId });
    return this.child;
  }
}
