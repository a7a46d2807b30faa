// The Relay side of the bench. Everything else in test/bench/ is target-agnostic: run.ts asks this
// function for a running Relay whose catalog routes the bench models to the fake upstream, then
// drives it exactly like the direct and Portkey targets.
//
// TO WIRE (kernel): replace the throw below with, roughly:
//   1. a config file under .bench/relay/ (gitignored) that loads the wire-vendor-a, wire-vendor-b,
//      vendor-openai, vendor-anthropic and translation plugins, with a data dir under .bench/relay/;
//   2. spawnPinned(opts.cpu, process.execPath, ['bin/relay.js', 'start', '--config', file], {env:
//      {RELAY_PORT, RELAY_CONTROL_PORT, RELAY_ADMIN_TOKEN, RELAY_MASTER_KEY, ...}}) so that the
//      gateway runs alone on its core (the pid returned must be the Relay process itself, for the
//      /proc CPU and RSS figures: spawnPinned uses `taskset -c`, which execs, so it is);
//   3. wait for GET /healthz, then seed through the admin API (Bearer RELAY_ADMIN_TOKEN):
//      providers (adapter vendor-a, vendor-b); hosts with baseUrl `${upstreamUrl}/v1`; host-keys
//      with stored values UPSTREAM_KEYS.openai / UPSTREAM_KEYS.anthropic; models BENCH_MODELS.*
//      bound to those hosts (upstreamModel = the same slug); a relay-tier policy granting them; a
//      relay key (its `plaintext` goes in the handle); usage logging to the file backend, payload
//      logging off (the default), so the figures include the always-on usage record;
//   4. return the handle below; stop() must kill that pid and wait for it to exit.
// Routes run.ts will use: /vendor-a/v1/chat/completions, /vendor-a/v1/responses,
// /vendor-a/v1/embeddings, /vendor-b/v1/messages, all with `Authorization: Bearer <relayKey>`.

export { BENCH_MODELS, UPSTREAM_KEYS } from './cases.ts';

export interface RelayBenchHandle {
  /** Inference plane, e.g. http://127.0.0.1:18080 (no trailing slash). */
  baseUrl: string;
  /** Pid of the Relay process (for /proc/<pid>/stat and status). */
  pid: number;
  /** Plaintext relay key whose policy grants every BENCH_MODELS slug. */
  relayKey: string;
  stop(): Promise<void>;
}

export interface RelayBenchOptions {
  /** CPU list for taskset, e.g. "0". */
  cpu?: string;
  /** Scratch directory (under .bench/) for config, data and logs. */
  workDir: string;
}

export class RelayNotWiredError extends Error {
  constructor() {
    super('Relay target not wired yet: test/bench/relay-target.ts startRelayForBench() is a stub');
    this.name = 'RelayNotWiredError';
  }
}

export async function startRelayForBench(upstreamUrl: string, opts: RelayBenchOptions): Promise<RelayBenchHandle> {
  void upstreamUrl;
  void opts;
  throw new RelayNotWiredError();
}
