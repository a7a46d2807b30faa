// Searching text for known secrets in every form they could leak in: as they are, base64,
// base64url, percent-encoded, hex, and JSON-escaped.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface Secret {
  name: string;
  value: string;
}

export interface Leak {
  secret: string;
  form: string;
  where: string;
}

/** The forms a secret is searched in. */
export function formsOf(value: string): Array<{ form: string; text: string }> {
  const bytes = Buffer.from(value, 'utf8');
  const forms = [
    { form: 'plain', text: value },
    { form: 'base64', text: bytes.toString('base64').replace(/=+$/, '') },
    { form: 'base64url', text: bytes.toString('base64url') },
    { form: 'percent-encoded', text: encodeURIComponent(value) },
    { form: 'hex', text: bytes.toString('hex') },
    { form: 'JSON-escaped', text: JSON.stringify(value).slice(1, -1) },
  ];
  // A base64 master key's raw bytes, hex-encoded.
  const raw = Buffer.from(value, 'base64');
  if (raw.length === 32 && raw.toString('base64') === value) forms.push({ form: 'key bytes as hex', text: raw.toString('hex') });
  const seen = new Set<string>();
  return forms.filter((f) => f.text.length >= 8 && !seen.has(f.text) && seen.add(f.text));
}

export class SecretSearch {
  readonly leaks: Leak[] = [];
  places = 0;
  private readonly needles: Array<{ secret: string; form: string; text: string }>;

  constructor(readonly secrets: Secret[]) {
    this.needles = secrets.flatMap((s) => formsOf(s.value).map((f) => ({ secret: s.name, ...f })));
  }

  /** Searches `text`, found at `where`; `allowed` names secrets that legitimately appear there. */
  search(where: string, text: string, allowed: string[] = []): void {
    this.places++;
    for (const n of this.needles) {
      if (!allowed.includes(n.secret) && text.includes(n.text)) this.leaks.push({ secret: n.secret, form: n.form, where });
    }
  }

  /** Searches every file under `dir` (bounded: 20k files, 50 MB each). */
  searchDirectory(dir: string): number {
    let files = 0;
    const walk = (d: string) => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        if (files >= 20_000) return;
        const p = path.join(d, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (entry.isFile() && statSync(p).size <= 50 * 1024 * 1024) {
          files++;
          this.search(`file ${path.relative(dir, p)}`, readFileSync(p).toString('latin1'));
        }
      }
    };
    walk(dir);
    return files;
  }
}
