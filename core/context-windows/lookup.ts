// A model's effective context window: its spec.contextWindow when set, else the smallest window
// the shipped table (table.ts) knows for the upstream models its enabled bindings send, else none.
import type { Model } from '../catalog/kinds.ts';
import { unprefixedName } from '../pricing/model-names.ts';
import { KNOWN_WINDOWS, type KnownWindow } from './table.ts';

export interface EffectiveWindow {
  tokens: number;
  /** `spec`: the model's own contextWindow; `table`: the shipped table, for `upstreamModel`. */
  source: 'spec' | 'table';
  /** The binding's upstream model whose table entry gave the window (source `table`). */
  upstreamModel?: string;
  /** The table entry's name and the vendor page it was read from (source `table`). */
  known?: KnownWindow;
}

/** Longest names first: gpt-4o-mini-2024-07-18 is gpt-4o-mini's, not gpt-4o's. */
const BY_LENGTH = [...KNOWN_WINDOWS].sort((a, b) => b.model.length - a.model.length);
/**
 * What may follow a table name: a boundary before a date or version stamp (-2024-08-06, -20250929,
 * @20251001, -v1:0, -001). Variants with another window are listed by their own, longer, name.
 */
const STAMP_START = new Set(['-', '@', ':']);
/** A 1M-context marker (claude-sonnet-4-5[1m]) changes the window: the table does not know it. */
const CONTEXT_MARKER = /\[\d+[km]\]/;

const resolved = new Map<string, KnownWindow | null>();
const MAX_RESOLVED = 4096;

/** The table entry for an upstream model name, by the longest table name it starts with; else null. */
export function knownWindowOf(upstreamModel: string): KnownWindow | null {
  const cached = resolved.get(upstreamModel);
  if (cached !== undefined) return cached;
  const name = unprefixedName(upstreamModel);
  let found: KnownWindow | null = null;
  if (!CONTEXT_MARKER.test(name)) {
    for (const entry of BY_LENGTH) {
      if (name === entry.model || (name.startsWith(entry.model) && STAMP_START.has(name[entry.model.length]!))) {
        found = entry;
        break;
      }
    }
  }
  if (resolved.size >= MAX_RESOLVED) resolved.clear();
  resolved.set(upstreamModel, found);
  return found;
}

/** Snapshots replace a changed model's object, so a model's window is worked out once. */
const effective = new WeakMap<Model, EffectiveWindow | null>();

export function effectiveWindow(model: Model | undefined): EffectiveWindow | null {
  if (!model) return null;
  const cached = effective.get(model);
  if (cached !== undefined) return cached;
  let window: EffectiveWindow | null = null;
  if (model.spec.contextWindow !== undefined) {
    window = { tokens: model.spec.contextWindow, source: 'spec' };
  } else {
    // Any enabled binding may serve the request: the smallest window it is known to have decides.
    for (const binding of model.spec.bindings) {
      if (binding.enabled === false) continue;
      const known = knownWindowOf(binding.upstreamModel);
      if (known && (window === null || known.tokens < window.tokens)) window = { tokens: known.tokens, source: 'table', upstreamModel: binding.upstreamModel, known };
    }
  }
  effective.set(model, window);
  return window;
}
