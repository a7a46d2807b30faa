// The conditions an upstream priced an answer under beyond its tokens (Usage.price_modifiers:
// Anthropic's fast mode, US-only inference), turned into one multiple of the tokens' cost from the
// table's figures for the model. A modifier the table has no figure for is named as unpriced, so a
// bill that is too low says so rather than passing for right.
export interface ModifiedPrice {
  /** What the tokens' cost is multiplied by. */
  factor: number;
  /** The modifiers the answer reported, in its order. */
  applied: string[];
  /** Those with no figure for this model. */
  unpriced: string[];
}

const UNMODIFIED: ModifiedPrice = Object.freeze({ factor: 1, applied: [], unpriced: [] }) as ModifiedPrice;

export function modifiedPrice(reported: readonly string[] | undefined, figures: Readonly<Record<string, number>> | null): ModifiedPrice {
  if (reported === undefined || reported.length === 0) return UNMODIFIED;
  const out: ModifiedPrice = { factor: 1, applied: [], unpriced: [] };
  for (const name of reported ?? []) {
    out.applied.push(name);
    const figure = figures && Object.hasOwn(figures, name) ? figures[name] : undefined;
    if (figure === undefined) out.unpriced.push(name);
    else out.factor *= figure;
  }
  return out;
}
