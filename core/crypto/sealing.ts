// AES-256-GCM sealing of host-key values under RELAY_MASTER_KEY, with a fresh 96-bit nonce
// per value. Sealed form: `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url parts), where keyId
// names the master key so a rotation can tell which key opens a value.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { RelayError, StartupError } from '../errors.ts';

export interface MasterKey {
  id: string;
  key: Buffer;
}

/** Parses a master key: 32 bytes as base64, base64url or hex. Throws StartupError otherwise. */
export function parseMasterKey(value: string, envName = 'RELAY_MASTER_KEY'): MasterKey {
  const trimmed = value.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else {
    const b = Buffer.from(trimmed, 'base64');
    if (b.length === 32) key = b;
  }
  if (!key) throw new StartupError(`${envName} must be 32 bytes, base64 or hex encoded (generate one with: relay master-key generate)`);
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 8), key };
}

export function generateMasterKey(): string {
  return randomBytes(32).toString('base64');
}

export class Sealer {
  /** `current` seals; `previous` only opens (during a rotation). */
  constructor(private readonly current: MasterKey | null, private readonly previous: MasterKey | null = null) {}

  get enabled(): boolean {
    return this.current !== null;
  }

  get currentKeyId(): string | null {
    return this.current?.id ?? null;
  }

  /** The id of RELAY_MASTER_KEY_PREVIOUS, which only opens values during a rotation. */
  get previousKeyId(): string | null {
    return this.previous?.id ?? null;
  }

  seal(plaintext: string): string {
    if (!this.current) throw new RelayError('RELAY_ERR_MASTER_KEY_MISSING', 'Storing a host-key value needs RELAY_MASTER_KEY to be set; use valueFrom.kind "env" or set the master key.');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', this.current.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  /** Which master key sealed a value. */
  static keyIdOf(sealed: string): string | null {
    const parts = sealed.split('.');
    return parts.length === 5 && parts[0] === 'v1' ? parts[1] : null;
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== 'v1') throw new Error('sealed value has an unknown format');
    const [, keyId, iv, tag, ct] = parts;
    const key = [this.current, this.previous].find((k) => k?.id === keyId);
    if (!key) throw new Error(`sealed value needs master key ${keyId}, which is not configured`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}
