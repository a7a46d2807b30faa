// The lean server: the inference listener's connections are read by Relay's own HTTP/1.1 reader
// (lean-connection.ts) as long as they carry POSTs to inference-lane routes in the plain form
// request-head.ts accepts, and handed to Node's HTTP server, the listener itself, from the first
// request that is anything else. Node's server keeps listening, closing and counting connections;
// this only takes its 'connection' event first.
//
// Measured reason: on the bench's chat case a bare proxy cost 71 us of CPU a request on node:http
// and 60 us reading and writing the socket itself; Node's request and response objects are the
// difference (Relay: see test/bench/RESULTS.md for the lean server on and off).
//
// Timeouts as Node's server has them: an idle connection closes after keepAliveTimeout, a head not
// complete after headersTimeout gets 408. Like the server Fastify sets up (requestTimeout 0), a
// body has no time limit of its own.
import { maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { InferenceLane } from '../inference-lane.ts';
import { LeanConnection, type LeanConnectionHost } from './lean-connection.ts';

/** How often idle connections and slow heads are looked for. */
const SWEEP_MS = 1000;

export function installLeanServer(server: Server, lane: InferenceLane): void {
  const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const connections = new Set<LeanConnection>();
  const host: LeanConnectionHost = {
    lane,
    maxHeadBytes: maxHeaderSize,
    get keepAliveSeconds() {
      return Math.floor(server.keepAliveTimeout / 1000);
    },
    get listening() {
      return server.listening;
    },
    handOver(socket) {
      for (const listener of nodeListeners) listener.call(server, socket);
    },
    forget(connection) {
      connections.delete(connection);
    },
  };
  server.on('connection', (socket: Socket) => {
    connections.add(new LeanConnection(socket, host));
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const connection of connections) {
      if (connection.idle && server.keepAliveTimeout > 0 && now - connection.since > server.keepAliveTimeout) connection.destroy();
      else if (connection.readingHead && server.headersTimeout > 0 && now - connection.since > server.headersTimeout) connection.timeOutHead();
    }
  }, SWEEP_MS);
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  // Closing the server closes idle connections (Node 19+, and Fastify's forceCloseConnections):
  // the lean ones too.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const connection of connections) if (connection.idle) connection.destroy();
  };
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const connection of connections) connection.destroy();
  };
}
