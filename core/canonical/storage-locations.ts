// A media URL that the upstream reads with the host's own cloud identity (an s3:// object Bedrock
// reads with Relay's AWS role, a gs:// object or a Gemini file read under the host's project) gives
// every caller of the host what that identity may read, other teams' objects included. Such a URL
// passes only under a prefix the host's `storageLocations` option lists.
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { CanonicalRequest, ContentPart } from './types.ts';

export interface StorageLocationRule {
  /** Whether the upstream would read `url` with the host's own credentials. */
  isStorage(url: string): boolean;
  /** The host's `storageLocations`: prefixes, each ending in `/`, that any caller may name. */
  allowed: readonly string[] | undefined;
  /** The model as the caller named it, for the message. */
  model: string;
}

/** A `.` or `..` path segment, written or percent-encoded: a server may resolve it out of a listed prefix. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:[/?#]|$)/i;

function urlsOf(parts: readonly ContentPart[], into: string[]): void {
  for (const part of parts) {
    if ((part.type === 'image' || part.type === 'document') && part.source.type === 'url') into.push(part.source.url);
    else if (part.type === 'tool_result') urlsOf(part.content, into);
  }
}

/** The scheme and authority lower-cased, as a server compares them. */
function normalized(url: string): string {
  return url.trim().replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, (origin) => origin.toLowerCase());
}

function listed(url: string, allowed: readonly string[]): boolean {
  const candidate = normalized(url);
  return !DOT_SEGMENT.test(candidate.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/, '')) && allowed.some((prefix) => candidate.startsWith(prefix));
}

/** Throws a 403 naming the first image or document URL of `request` that reads storage the host does not list. */
export function refuseUnlistedStorage(request: CanonicalRequest, rule: StorageLocationRule): void {
  const urls: string[] = [];
  for (const message of request.messages) urlsOf(message.content, urls);
  for (const url of urls) {
    if (!rule.isStorage(url) || listed(url, rule.allowed ?? [])) continue;
    throw new RelayError('RELAY_ERR_FORBIDDEN', `The model \`${rule.model}\` may not read \`${echoedName(url)}\`: its upstream reads such a location with `
      + "Relay's own cloud credentials, for whoever names it, and the host's spec.options.storageLocations lists no prefix of it. "
      + 'Send the bytes instead, or ask an operator to list the location.');
  }
}
