// What the inference lane and the pipeline write an answer through: the part of Node's
// ServerResponse they use. Node's ServerResponse has it (requests Fastify serves, and the lane on
// node:http); so has LeanResponse (lean/lean-response.ts), the lean server's answer on a socket.
import type { OutgoingHttpHeaders } from 'node:http';

export interface ClientResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  /** True once the whole answer is flushed to the socket. */
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
  /** Sends the head now, before any body byte. */
  flushHeaders(): void;
  /** False when the socket is full: wait for 'drain'. */
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  /** 'close' (answer finished, or the client went away), 'drain', 'finish'. */
  on(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  once(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  off(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
}
