// Which process may write the embedded database a relay CLI command is about to change: the
// Relay holding its directory's lock (the command goes through its control API), or, when none
// holds it, the command itself (openDatabase takes the lock). The config's control port does not
// say: a Relay started with another port, or serving another directory, may answer there.
import os from 'node:os';
import path from 'node:path';
import { embeddedDatabaseDir } from '../db/open.ts';
import { embeddedDirLocked } from '../db/embedded-lock.ts';
import { readHolder } from '../db/embedded-holder.ts';
import { StartupError } from '../errors.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The control URL of the Relay holding `dataDir`'s embedded database, or null when no process holds it. */
export async function embeddedHolderUrl(dataDir: string, command: string): Promise<string | null> {
  const dir = embeddedDatabaseDir(path.resolve(dataDir));
  if (!(await embeddedDirLocked(dir))) return null;
  const holder = readHolder(dir);
  if (!holder) {
    throw new StartupError(`${command}: the embedded database ${dir} is in use by another relay CLI command, or by a Relay starting or stopping `
      + '(it names no control API); run this again once it is done');
  }
  if (holder.hostname !== os.hostname() && LOOPBACK.has(new URL(holder.controlUrl).hostname)) {
    throw new StartupError(`${command}: the embedded database ${dir} is held by a Relay on host ${holder.hostname}, whose control API is ${holder.controlUrl} there; `
      + 'run this on that host, or pass --url');
  }
  return holder.controlUrl;
}
