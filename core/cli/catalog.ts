// `relay catalog export` and `relay catalog apply -f FILE [--dry-run] [--prune]`: through a
// running Relay's admin API (--url, RELAY_ADMIN_TOKEN), or on the database of a stopped one with
// the same config `relay` starts from (its plugins loaded: a provider's adapter is checked as the
// API checks it). A Relay running on the embedded database owns it (it holds the data directory's
// lock and names its control API there): then its API is used.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import type { ApplyOutcome } from '../catalog-file/apply.ts';
import type { CatalogDocument } from '../catalog-file/document.ts';
import { catalogYaml, formatOutcome, parseCatalogText } from '../catalog-file/text.ts';
import { loadConfigFile } from '../config/load.ts';
import { StartupError } from '../errors.ts';
import { createRelay } from '../server/relay.ts';
import { cliActor, recordCatalogChanges } from '../control/audit-store.ts';
import { embeddedHolderUrl } from './embedded-holder-url.ts';

export const CATALOG_USAGE = 'usage: relay catalog export [--url http://host:8081] > catalog.yaml\n'
  + '       relay catalog apply -f catalog.yaml [--dry-run] [--prune] [--url http://host:8081]';

export interface CatalogCommandOptions {
  configFile: string;
  url?: string;
  file?: string;
  dryRun?: boolean;
  prune?: boolean;
}

interface CatalogTarget {
  export(): Promise<CatalogDocument>;
  apply(document: unknown, options: { dryRun: boolean; prune: boolean }): Promise<ApplyOutcome>;
  close(): Promise<void>;
}

function apiTarget(url: string, token: string): CatalogTarget {
  const call = async <T>(method: string, p: string, body?: unknown): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(`${url}${p}`, {
        method, signal: AbortSignal.timeout(120_000),
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new StartupError(`relay catalog: cannot reach ${url} (${(err as Error).message})`);
    }
    const json = await res.json().catch(() => null) as (T & { error?: { message?: string } }) | null;
    if (res.status === 400 || res.status === 409) throw new StartupError(`relay catalog: ${json?.error?.message ?? `${url} answered ${res.status}`}`);
    if (!res.ok || json === null) throw new StartupError(`relay catalog: ${url} answered ${res.status}: ${json?.error?.message ?? 'no message'}`);
    return json;
  };
  return {
    export: () => call<CatalogDocument>('GET', '/api/catalog/export'),
    apply: (document, options) => call<ApplyOutcome>('POST', '/api/catalog/apply', { document, ...options }),
    close: async () => undefined,
  };
}

async function databaseTarget(configFile: string, env: Record<string, string | undefined>): Promise<CatalogTarget> {
  // Errors only, and to stderr: stdout carries the exported file, and the service's start-up warnings (no dashboard user) are not this command's.
  const relay = await createRelay({ configFile, env, applyCatalogFile: false, logger: pino({ level: 'error' }, pino.destination(2)) });
  return {
    export: () => relay.catalogFile.export(),
    apply: async (document, options) => {
      const outcome = await relay.catalogFile.apply(document, options);
      if (!options.dryRun && outcome.changes.length > 0) {
        await recordCatalogChanges(relay.db, cliActor(), outcome.changes).catch((err: Error) => {
          // The changes are made: say that they went unrecorded rather than fail the command.
          process.stderr.write(`relay catalog apply: the changes were made, but the audit trail could not record them (${err.message})\n`);
        });
      }
      return outcome;
    },
    close: () => relay.close(),
  };
}

async function openTarget(options: CatalogCommandOptions, env: Record<string, string | undefined>): Promise<CatalogTarget> {
  const token = env.RELAY_ADMIN_TOKEN || undefined;
  if (options.url) {
    if (!token) throw new StartupError('relay catalog --url needs RELAY_ADMIN_TOKEN (the running Relay\'s admin token)');
    return apiTarget(options.url.replace(/\/+$/, ''), token);
  }
  const { config } = loadConfigFile(options.configFile, env);
  if (!config.database.url) {
    const running = await embeddedHolderUrl(config.dataDir, 'relay catalog');
    if (running !== null) {
      if (!token) {
        throw new StartupError(`relay catalog: a Relay is running on the embedded database and holds it (${config.dataDir}; its control API is ${running}); `
          + 'set RELAY_ADMIN_TOKEN to go through it (or pass --url), or stop it first');
      }
      return apiTarget(running, token);
    }
  }
  return databaseTarget(options.configFile, env);
}

export async function runCatalog(sub: string | undefined, options: CatalogCommandOptions, write: (text: string) => void,
  env: Record<string, string | undefined> = process.env): Promise<number> {
  if (sub !== 'export' && sub !== 'apply') throw new StartupError(CATALOG_USAGE);
  if (sub === 'export' && (options.file !== undefined || options.dryRun || options.prune)) {
    throw new StartupError(`relay catalog export takes no -f, --dry-run or --prune (it prints to standard output)\n${CATALOG_USAGE}`);
  }
  let document: unknown;
  if (sub === 'apply') {
    if (!options.file) throw new StartupError(`relay catalog apply needs -f FILE\n${CATALOG_USAGE}`);
    const file = path.resolve(options.file);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new StartupError(`${file}: cannot read the catalog file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    document = parseCatalogText(text, file);
  }
  const target = await openTarget(options, env);
  try {
    if (sub === 'export') {
      write(catalogYaml(await target.export()));
      return 0;
    }
    write(formatOutcome(await target.apply(document, { dryRun: options.dryRun === true, prune: options.prune === true })));
    return 0;
  } finally {
    await target.close();
  }
}
