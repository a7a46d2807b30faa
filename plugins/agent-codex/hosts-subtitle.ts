// The subtitle of a model row in Codex's picker: the hosts that serve the model and their
// per-million-token rates (a pricing entity, else the shipped price table by the binding's upstream
// model), e.g. "hosts: OpenAI EU (USD 2.50 in / 10.00 out per 1M tokens), vLLM lab (no pricing)".
import { priceFor, type CatalogSnapshot, type Model, type Price } from '../../core/plugin-api/catalog.ts';

function rate(value: number): string {
  return value.toFixed(value !== 0 && value < 0.01 ? 4 : 2);
}

export function pricingText(price: Price | null): string {
  if (!price) return 'no pricing';
  const { currency } = price;
  const { inputPerMillion, outputPerMillion, cachedInputPerMillion } = price.rates;
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
  const parts = servingHosts(model, snapshot).map((host) => {
    const binding = model.spec.bindings.find((b) => b.enabled && b.hostId === host.metadata.id);
    return `${host.metadata.displayName} (${pricingText(priceFor(snapshot, model.metadata.id, host.metadata.id, binding?.upstreamModel ?? null))})`;
  });
  return parts.length === 0 ? '' : `hosts: ${parts.join(', ')}`;
}
