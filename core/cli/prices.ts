// `relay prices`: the shipped price table as an operator reads it (or as JSON for a script), and
// `relay prices <name>`: which entry an upstream model name resolves to.
import { StartupError } from '../errors.ts';
import { tableEntryFor } from '../pricing/price-lookup.ts';
import { ANTHROPIC_MODIFIER_SOURCES, ANTHROPIC_WEB_SEARCH_SOURCE, OPENAI_TIER_SOURCES, PRICE_TABLE, TABLE_CURRENCY, type TableEntry } from '../pricing/table.ts';
import type { PriceRates } from '../pricing/rates.ts';

const COLUMNS = ['model', 'input', 'cached in', '5m write', '1h write', 'output', 'searches /1k', 'long context', 'modifiers', 'source', 'read on'] as const;

/** A rate as written on the vendors' pages; '-' when the price has none (the input rate applies). */
function rate(value: number | undefined): string {
  return value === undefined ? '-' : String(value);
}

function longContext(rates: PriceRates): string {
  const long = rates.longContext;
  if (!long) return '-';
  return `>${long.aboveInputTokens}: ${long.inputPerMillion} in / ${long.outputPerMillion} out`;
}

/** `fast 6x, us_inference 1.1x`: what an answer's price modifiers multiply its tokens' cost by. */
function modifiers(entry: TableEntry): string {
  const list = Object.entries(entry.modifiers ?? {});
  return list.length === 0 ? '-' : list.map(([name, factor]) => `${name} ${Number(factor.toPrecision(4))}x`).join(', ');
}

function row(entry: TableEntry): string[] {
  const r = entry.rates;
  const names = [entry.model, ...(entry.aliases ?? [])].join(', ');
  return [names, rate(r.inputPerMillion), rate(r.cachedInputPerMillion), rate(r.cacheWritePerMillion), rate(r.cacheWrite1hPerMillion),
    rate(r.outputPerMillion), rate(r.webSearchPerThousand), longContext(r), modifiers(entry), entry.source, entry.readOn];
}

/** The table as aligned text columns. */
export function formatPriceTable(entries: readonly TableEntry[]): string {
  const rows = [[...COLUMNS], ...entries.map(row)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
  return `${TABLE_CURRENCY} per million tokens. A pricings entity for a model overrides its entry; '-' is priced at the input rate.\n`
    + `Server-side web searches per 1,000 (Anthropic's: ${ANTHROPIC_WEB_SEARCH_SOURCE}); '-' leaves them unpriced.\n`
    + `Modifiers multiply the tokens' cost of an answer the vendor says ran under them (${[...ANTHROPIC_MODIFIER_SOURCES, ...OPENAI_TIER_SOURCES].join(', ')}).\n`
    + `Dated snapshots and Bedrock/Vertex names resolve to these entries: relay prices <upstream model name>.\n\n${lines.join('\n')}\n`;
}

/** Runs `relay prices [name] [--json]`; returns the exit code (1 when a named model is not in the table). */
export function runPrices(name: string | undefined, json: boolean, write: (text: string) => void): number {
  if (name === undefined) {
    write(json ? `${JSON.stringify({ currency: TABLE_CURRENCY, models: PRICE_TABLE }, null, 2)}\n` : formatPriceTable(PRICE_TABLE));
    return 0;
  }
  if (name.length > 256) throw new StartupError('relay prices: a model name is at most 256 characters');
  const entry = tableEntryFor(name);
  if (!entry) {
    write(json ? 'null\n' : `${JSON.stringify(name)} is not in the price table: give its model a pricings entity, or its requests are unpriced\n`);
    return 1;
  }
  write(json ? `${JSON.stringify({ currency: TABLE_CURRENCY, ...entry }, null, 2)}\n` : formatPriceTable([entry]));
  return 0;
}
