// The subtitle of a model row in Codex's picker: the hosts that serve the model and their
// per-million-token rates from the catalog's pricings, e.g.
// "hosts: OpenAI EU (USD 2.50 in / 10.00 out per 1M tokens), vLLM lab (no pricing)".
import type { CatalogSnapshot, Model, Pricing } from '../../core/plugin-api/catalog.ts';

function rate(value: number): string {
  return value.toFixed(value !== 0 && value < 0.01 ? 4 : 2);
}

export function pricingText(pricing: Pricing | undefined): string {
  if (!pricing) return 'no pricing';
  const { currency, inputPerMillion, outputPerMillion, cachedInputPerMillion } = pricing.spec;
  const cached = cachedInputPerMillion === undefined ? '' : `, cached in ${rate(cachedInputPerMillion)}`;
  return `${currency} ${rate(inputPerMillion)} in / ${rate(outputPerMillion)} out${cached} per 1M tokens`;
}

/** Enabled hosts of the model's enabled bindings, each once, in binding order. */
export function servingHosts(model: Model, snapshot: CatalogSnapshot) {
  const seen = new Set<string>();
  const hosts = [];
  for (const binding of model.spec.bindings) {
    if (!binding.enabled || seen.has(binding.hostId)) continue;
    const host = snapshot.hosts.get(binding.hostId);
    if (!host || !host.spec.enabled) continue;
    seen.add(binding.hostId);
    hosts.push(host);
  }
  return hosts;
}

export function hostsSubtitle(model: Model, snapshot: CatalogSnapshot): string {
  const parts = servingHosts(model, snapshot).map((host) =>
    `${host.metadata.displayName} (${pricingText(snapshot.pricingFor(model.metadata.id, host.metadata.id))})`);
  return parts.length === 0 ? '' : `hosts: ${parts.join(', ')}`;
}
