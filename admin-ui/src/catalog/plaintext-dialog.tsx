// Shows a relay key's plaintext the one time the server returns it.
import { Dialog } from '../ui/dialog.tsx';
import { CopyButton } from '../ui/copy-button.tsx';

export function PlaintextDialog({ plaintext, prefix, rotated, onClose }: { plaintext: string | null; prefix?: string; rotated?: boolean; onClose: () => void }) {
  return (
    <Dialog
      title={rotated ? 'Relay key rotated' : 'Relay key created'}
      open={plaintext !== null}
      onClose={onClose}
      dismissable={false}
      footer={<button type="button" class="btn btn-primary" onClick={onClose}>I have copied the key</button>}
    >
      <div class="banner banner-warning" role="alert">
        <strong>Copy this key now.</strong> It will not be shown again: Relay keeps only its hash{prefix ? <> and the prefix <code>{prefix}</code></> : null}.
        {rotated && ' The previous key no longer works.'}
      </div>
      <label class="field-label" for="plaintext-key">Relay key</label>
      <div class="secret-row">
        <input id="plaintext-key" class="input mono" readOnly value={plaintext ?? ''} onFocus={(e) => e.currentTarget.select()} data-testid="relay-key-plaintext" />
        <CopyButton text={plaintext ?? ''} />
      </div>
      <p class="field-help">Send it as <code>Authorization: Bearer &lt;key&gt;</code> on inference requests.</p>
    </Dialog>
  );
}
