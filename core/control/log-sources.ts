// Which log backends a read asks, and what their failures mean. A read covers the backend selected
// now and every other loaded one, so switching backends hides nothing written before. The selected
// backend's failure fails the read; another's is named in the answer's `skipped`, never silent.
import { RelayError, isRelayError, type ErrorCode } from '../errors.ts';

export type LogKind = 'usage' | 'payload';

/** A backend the read could not cover, and why. */
export interface SkippedBackend {
  backend: string;
  code: ErrorCode;
  message: string;
}

/** Failures that leave one backend out of a read rather than failing it (when it is not the selected one). */
const SKIPPABLE = new Set<ErrorCode>(['RELAY_ERR_LOG_BACKEND_UNAVAILABLE', 'RELAY_ERR_QUERY_UNSUPPORTED']);

/**
 * A backend that threw something other than a RelayError did not answer (a refused connection, a
 * timeout): its own code, so it is never mistaken for the catalog database being down.
 */
export function backendUnavailable(kind: LogKind, id: string, cause: unknown): RelayError {
  return new RelayError('RELAY_ERR_LOG_BACKEND_UNAVAILABLE',
    `the ${id} ${kind} backend did not answer; reads from it fail until it returns (inference and catalog changes are unaffected)`,
    { cause });
}

export async function askBackend<T>(kind: LogKind, id: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw isRelayError(err) ? err : backendUnavailable(kind, id, err);
  }
}

export interface Source<B> {
  backend: B;
  selected: boolean;
}

/** The selected backend first, then every other loaded one. */
export function sourcesOf<B extends { id: string }>(selected: B, loaded: B[]): Array<Source<B>> {
  return [{ backend: selected, selected: true }, ...loaded.filter((b) => b.id !== selected.id).map((backend) => ({ backend, selected: false }))];
}

export interface Covered<T> {
  results: T[];
  skipped: SkippedBackend[];
}

/**
 * Runs `read` on every source at once; a source whose read is null (it has no such method) is
 * left out. The selected source's failure is thrown; another's skippable failure is reported.
 */
export async function readEach<B extends { id: string }, T>(
  kind: LogKind, sources: Array<Source<B>>, read: (backend: B) => Promise<T> | null,
): Promise<Covered<T>> {
  const settled = await Promise.allSettled(sources.map(({ backend }) => askBackend(kind, backend.id, async () => read(backend))));
  const results: T[] = [];
  const skipped: SkippedBackend[] = [];
  settled.forEach((outcome, i) => {
    const source = sources[i]!;
    if (outcome.status === 'fulfilled') {
      if (outcome.value !== null) results.push(outcome.value);
      return;
    }
    const err = outcome.reason as RelayError;
    if (source.selected || !SKIPPABLE.has(err.code)) throw err;
    skipped.push({ backend: source.backend.id, code: err.code, message: err.message });
  });
  return { results, skipped };
}

/** The backends left out of any of an answer's reads, each once (its first reason). */
export function skippedByAny(...reads: SkippedBackend[][]): SkippedBackend[] {
  const byBackend = new Map<string, SkippedBackend>();
  for (const skipped of reads.flat()) if (!byBackend.has(skipped.backend)) byBackend.set(skipped.backend, skipped);
  return [...byBackend.values()];
}
