// The model-catalog document Codex reads through `model_catalog_json` (SPEC.md "Client
// integration: Responses-API agent client"): exactly the spec's field set per entry, built for
// one relay key from the catalog snapshot at the time of the request.
import type { CatalogSnapshot, Model } from '../../core/plugin-api/catalog.ts';
import { hostsSubtitle } from './hosts-subtitle.ts';
import { reasoningLevels, type ReasoningLevel } from './reasoning-levels.ts';

export interface ModelEntry {
  slug: string;
  display_name: string;
  description: string;
  base_instructions: string;
  supported_reasoning_levels: ReasoningLevel[];
  shell_type: 'unified_exec';
  visibility: 'list';
  supported_in_api: true;
  priority: number;
  support_verbosity: boolean;
  truncation_policy: { mode: 'bytes'; limit: number };
  context_window?: number;
  experimental_supported_tools: string[];
  availability_nux: null;
  upgrade: null;
  default_verbosity: null;
  /**
   * `freeform`: Codex 0.169.0 then sends its custom apply_patch tool; with null it sends none and
   * rejects a model's apply_patch call. Every route serves it: a Responses upstream receives the
   * tool as sent, other upstreams see a function with one string parameter `input`.
   */
  apply_patch_tool_type: 'freeform';
}

export interface ModelsDocument {
  models: ModelEntry[];
}

/** Bytes of tool output Codex keeps in the history it resends. */
export const TRUNCATION_LIMIT_BYTES = 10_000;

/**
 * Codex uses this as the system prompt unless `model_instructions_file` is set, which the
 * example config does: the prompt has to match the Codex version, so Relay does not ship one.
 */
export const BASE_INSTRUCTIONS = 'You are a coding agent running in the Codex CLI. Be precise, safe and helpful.';

function modelEntry(model: Model, priority: number, snapshot: CatalogSnapshot): ModelEntry {
  const subtitle = hostsSubtitle(model, snapshot);
  const description = [model.spec.description, subtitle].filter((s) => s !== undefined && s !== '').join(' · ');
  return {
    slug: model.metadata.slug,
    display_name: model.metadata.displayName,
    description,
    base_instructions: BASE_INSTRUCTIONS,
    supported_reasoning_levels: reasoningLevels(model),
    shell_type: 'unified_exec',
    visibility: 'list',
    supported_in_api: true,
    priority,
    support_verbosity: false,
    truncation_policy: { mode: 'bytes', limit: TRUNCATION_LIMIT_BYTES },
    ...(model.spec.contextWindow === undefined ? {} : { context_window: model.spec.contextWindow }),
    experimental_supported_tools: [],
    availability_nux: null,
    upgrade: null,
    default_verbosity: null,
    apply_patch_tool_type: 'freeform',
  };
}

/** `models` in the order given (the caller's order is the priority, ascending from 0). */
export function modelsDocument(models: readonly Model[], snapshot: CatalogSnapshot): ModelsDocument {
  return { models: models.map((model, i) => modelEntry(model, i, snapshot)) };
}
