// A TCP proxy in front of a real server (Postgres, Valkey) that can hang as a backend that accepts
// and never replies: hang() cuts the connections made so far and holds every new one (accepted,
// its bytes read and kept, nothing ever answered); stall() holds the connections made so far too
// (their server goes silent mid-conversation: what either side sends is no longer forwarded) and
// every new one; answer() forwards the connections made after it, while the held ones stay held,
// as connections a server lost. dropHeld() cuts those (as a restarted server would), close() ends
// everything. refuse() is a server that is down: every connection cut, new ones refused
// (ECONNREFUSED) until reopen() listens on the same port again. accepted() and clients() say when
// clients connected and how many connections are still open (a client that retries, one that left).
// delay(ms) is a server that is slow but answers: every answer is forwarded ms late, in order.
import net from 'node:net';

export interface HangingProxy {
  port: number;
  hang(): void;
  stall(): void;
  answer(): void;
  /** Answers the server sends from now on forwarded `ms` late (0: at once again), on every connection, order kept. */
  delay(ms: number): void;
  /** What clients sent on held connections (to count the commands that were never answered). */
  held(): string;
  /** When each client connection was accepted (Date.now()), held or forwarded, in order. */
  accepted(): number[];
  /** Client connections still open. */
  clients(): number;
  dropHeld(): void;
  refuse(): Promise<void>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function startHangingProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<HangingProxy> {
  const sockets = new Set<net.Socket>();
  const heldBytes: Buffer[] = [];
  let hanging = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket)).on('error', () => socket.destroy());
  };
  const forwarded = new Set<net.Socket>();
  // Each forwarded client connection and its upstream, so stall() can stop forwarding both ways.
  const pairs = new Map<net.Socket, net.Socket>();
  const heldSockets = new Set<net.Socket>();
  const acceptedAt: number[] = [];
  const clientSockets = new Set<net.Socket>();
  let delayMs = 0;
  // Connections whose answers go through a delaying queue, and how to stop it (stall()).
  const delayed = new Map<net.Socket, () => void>();
  const delayAnswers = (client: net.Socket, upstream: net.Socket) => {
    upstream.unpipe(client);
    const queue: Array<{ at: number; chunk: Buffer }> = [];
    let timer: NodeJS.Timeout | undefined;
    const pump = () => {
      timer = undefined;
      const now = Date.now();
      // First in, first out: an answer never overtakes one delayed longer before it.
      while (queue.length > 0 && queue[0].at <= now) client.write(queue.shift()!.chunk);
      if (queue.length > 0) timer = setTimeout(pump, queue[0].at - now);
    };
    const onData = (chunk: Buffer) => {
      queue.push({ at: Date.now() + delayMs, chunk });
      if (!timer) pump();
    };
    const stop = () => { upstream.off('data', onData); clearTimeout(timer); queue.length = 0; delayed.delete(client); };
    upstream.on('data', onData).on('close', stop);
    // unpipe() paused it: a 'data' listener alone does not resume it.
    upstream.resume();
    delayed.set(client, stop);
  };
  const hold = (client: net.Socket) => {
    heldSockets.add(client);
    client.on('data', (chunk) => { heldBytes.push(chunk); }).on('close', () => heldSockets.delete(client));
  };
  const server = net.createServer((client) => {
    acceptedAt.push(Date.now());
    clientSockets.add(client);
    client.on('close', () => clientSockets.delete(client));
    track(client);
    if (hanging) return hold(client);
    const upstream = net.connect(targetPort, targetHost);
    track(upstream);
    forwarded.add(client).add(upstream);
    pairs.set(client, upstream);
    const drop = () => { client.destroy(); upstream.destroy(); forwarded.delete(client); forwarded.delete(upstream); pairs.delete(client); };
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
    if (delayMs > 0) delayAnswers(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    hang() {
      hanging = true;
      for (const socket of forwarded) socket.destroy();
    },
    stall() {
      hanging = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        delayed.get(client)?.();
        // The server's late answers are thrown away; the client's bytes are kept, as for held ones.
        upstream.on('data', () => {});
        hold(client);
        // unpipe() paused the client's side: its bytes are read (and kept) only once resumed.
        client.resume();
      }
      pairs.clear();
    },
    answer() {
      hanging = false;
    },
    delay(ms: number) {
      delayMs = ms;
      if (ms > 0) for (const [client, upstream] of pairs) if (!delayed.has(client)) delayAnswers(client, upstream);
    },
    held: () => Buffer.concat(heldBytes).toString('latin1'),
    accepted: () => [...acceptedAt],
    clients: () => clientSockets.size,
    dropHeld() {
      for (const socket of heldSockets) socket.destroy();
    },
    async refuse() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async reopen() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      // Already closed by refuse(): nothing more to wait for.
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
