// What was decided about a header name, remembered per name as received: the same few dozen
// names come on every request, and lower-casing and testing each one again was ~0.1 us a header
// (filterForwardHeaders, the lean client's request head). Bounded in count and in name length,
// so that names a client makes up cannot grow it without end.

const MAX_NAMES = 1024;
/** Real header names are short; longer ones are decided every time. */
const MAX_NAME_LENGTH = 64;

export class HeaderNameVerdicts<V> {
  private readonly verdicts = new Map<string, V>();

  get(name: string): V | undefined {
    return this.verdicts.get(name);
  }

  remember(name: string, verdict: V): void {
    if (this.verdicts.size >= MAX_NAMES || name.length > MAX_NAME_LENGTH) return;
    // Kept as a copy: a name read out of a request head is often a slice of the head's string,
    // and as a map key it would keep that whole head alive. A name that latin1 cannot hold as it
    // is (no header name read off the wire) is not kept.
    const copy = Buffer.from(name, 'latin1').toString('latin1');
    if (copy === name) this.verdicts.set(copy, verdict);
  }
}
