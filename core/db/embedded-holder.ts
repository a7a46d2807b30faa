// Where the Relay holding an embedded database's lock answers its control API, written beside
// the lock once its control port listens: a relay CLI command on the same directory goes through
// that Relay (the one process that may write the database), whatever control port its own
// config names.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';

export interface EmbeddedHolder {
  pid: number;
  /** A loopback control URL only reaches the holder from its own host (the directory may be on a shared volume). */
  hostname: string;
  controlUrl: string;
}

export function holderPath(dir: string): string {
  return `${dir}.holder.json`;
}

export function writeHolder(dir: string, controlUrl: string): void {
  const record: EmbeddedHolder = { pid: process.pid, hostname: os.hostname(), controlUrl };
  // Renamed into place: a reader never sees half a file.
  const partial = `${holderPath(dir)}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(record)}\n`);
  renameSync(partial, holderPath(dir));
}

/** The record, or null when there is none (or it is not one: a reader then treats the holder as unnamed). */
export function readHolder(dir: string): EmbeddedHolder | null {
  let text: string;
  try {
    text = readFileSync(holderPath(dir), 'utf8');
  } catch {
    return null;
  }
  try {
    const record = JSON.parse(text) as Partial<EmbeddedHolder>;
    return typeof record.controlUrl === 'string' && typeof record.hostname === 'string' && typeof record.pid === 'number' ? record as EmbeddedHolder : null;
  } catch {
    return null;
  }
}

export function removeHolder(dir: string): void {
  rmSync(holderPath(dir), { force: true });
}
