// Copies text to the clipboard and says so for a moment.
import { useState } from 'preact/hooks';

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
    setTimeout(() => setCopied('idle'), 2000);
  };
  return (
    <button type="button" class="btn btn-small" onClick={() => void copy()} aria-live="polite">
      {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Select and copy' : label}
    </button>
  );
}
