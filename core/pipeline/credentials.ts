// Resolves a host key's secret: from the environment (valueFrom.kind env) or by opening its
// sealed value. Opened values are cached by ciphertext so AES-GCM runs once per key, not per
// request; an edited key has a new ciphertext and so a new cache entry.
import type { HostKey } from '../catalog/kinds.ts';
import type { HostKeyEnvironment } from '../crypto/host-key-env.ts';
import type { Sealer } from '../crypto/sealing.ts';

export class CredentialResolver {
  private readonly opened = new Map<string, string>();

  constructor(private readonly sealer: Sealer, private readonly env: HostKeyEnvironment) {}

  /** The secret, or null with a reason when it cannot be had. */
  resolve(key: HostKey): { value: string } | { error: string } {
    const from = key.spec.valueFrom;
    if (from.kind === 'env') {
      const name = from.env ?? '';
      if (!name) return { error: 'no environment variable is named' };
      // Keys written before Relay refused its own variables are refused here too.
      const refusal = this.env.refusal(name);
      if (refusal !== null) return { error: refusal };
      const value = this.env.read(name);
      return value ? { value } : { error: `environment variable ${name} is not set` };
    }
    if (!key.sealedValue) return { error: 'no stored value' };
    const cached = this.opened.get(key.sealedValue);
    if (cached !== undefined) return { value: cached };
    try {
      const value = this.sealer.open(key.sealedValue);
      if (this.opened.size > 10_000) this.opened.clear();
      this.opened.set(key.sealedValue, value);
      return { value };
    } catch (err) {
      return { error: `stored value cannot be opened: ${(err as Error).message}` };
    }
  }
}
