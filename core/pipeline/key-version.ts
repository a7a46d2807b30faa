// A host key's version is its metadata.updatedAt: an operator's edit (a new value, say) makes a new
// one, and a request keeps the version it was routed with until it ends. Key health's marks and
// failure runs are about one version, so what a request sent before an edit met is not taken for
// news about the version in use since (key-health.ts).
// updatedAt is always Date#toISOString (catalog/store.ts): fixed width, so the strings sort by time.

/**
 * True when `version` predates `than`: the outcome of a request sent with it is stale. A mark
 * without a version (stored or published by an instance from before versions) is of every version.
 */
export function olderVersion(version: string | undefined, than: string | undefined): boolean {
  return version !== undefined && than !== undefined && version < than;
}

/** True when a mark set with `markVersion` is about `version` of the key. */
export function sameVersion(markVersion: string | undefined, version: string): boolean {
  return markVersion === undefined || markVersion === version;
}
