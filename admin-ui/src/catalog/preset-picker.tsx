// "Start from a preset" on the new-provider and new-host forms: fills the adapter and wire shapes,
// or the base URL and headers, of a known OpenAI-compatible server.
import { UPSTREAM_PRESETS, applyPreset } from './presets.ts';

export function PresetPicker({ kind, spec, onApply }: { kind: 'providers' | 'hosts'; spec: Record<string, unknown>; onApply: (spec: Record<string, unknown>) => void }) {
  const pick = (id: string) => {
    const preset = UPSTREAM_PRESETS.find((p) => p.id === id);
    if (preset) onApply(applyPreset(kind, preset, spec));
  };
  return (
    <div class="field" data-field="f-preset">
      <label class="field-label" for="f-preset">Preset</label>
      <select id="f-preset" class="input" value="" aria-describedby="f-preset-help" onChange={(e) => pick(e.currentTarget.value)}>
        <option value="">OpenAI-compatible server…</option>
        {UPSTREAM_PRESETS.map((p) => <option key={p.id} value={p.id}>{p.label}</option>)}
      </select>
      <p class="field-help" id="f-preset-help">
        Optional. Fills {kind === 'providers' ? 'the adapter (openai) and the wire shapes the server speaks' : 'the base URL (and headers) of the server'}; edit them after.
      </p>
    </div>
  );
}
