// A throwaway Postgres cluster for tests that stop and restart the database (the machine's
// shared server must keep running for everyone else). Runs the system's Postgres binaries as
// the postgres user (initdb refuses root) on a free port, with trust auth.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface PgCluster {
  url: string;
  port: number;
  start(): void;
  stop(): void;
  destroy(): void;
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort();
  if (versions.length === 0) throw new Error('no Postgres installation under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions.at(-1)}/bin`;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function asPostgres(cmd: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const res = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
    : spawnSync(cmd, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${path.basename(cmd)} failed: ${res.stderr || res.stdout}`);
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, 'data');
  asPostgres(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'root', '--no-sync']);
  const port = await freePort();
  const cluster: PgCluster = {
    url: `postgres://root@127.0.0.1:${port}/postgres`,
    port,
    start() {
      asPostgres(`${bin}/pg_ctl`, ['-D', data, '-w', '-t', '30', '-l', path.join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
    },
    stop() {
      asPostgres(`${bin}/pg_ctl`, ['-D', data, '-w', '-m', 'fast', 'stop']);
    },
    destroy() {
      try {
        cluster.stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
