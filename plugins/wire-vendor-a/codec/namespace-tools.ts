// Responses `namespace` tool groupings, e.g. {"type":"namespace","name":"multi_agent_v1",
// "tools":[...]}, have no canonical form: each member becomes a top-level tool named
// `<namespace>__<tool>`. On the way back the original request (EncodeContext.inbound) tells
// which flattened names belong to a namespace, and the call is returned the way the
// Responses API returns it: `name` is the member's name and `namespace` the group's.

export const NAMESPACE_SEPARATOR = '__';

export function flattenedName(namespace: string, tool: string): string {
  return `${namespace}${NAMESPACE_SEPARATOR}${tool}`;
}

export interface NamespacedName {
  namespace: string;
  name: string;
}

/** Flattened name -> {namespace, name}, read from the client's original Responses request. */
export function namespaceIndex(inbound: unknown): ReadonlyMap<string, NamespacedName> {
  const index = new Map<string, NamespacedName>();
  const tools = (inbound as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return index;
  for (const tool of tools as Array<{ type?: unknown; name?: unknown; tools?: unknown }>) {
    if (tool?.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) continue;
    for (const member of tool.tools as Array<{ name?: unknown }>) {
      if (typeof member?.name === 'string') index.set(flattenedName(tool.name, member.name), { namespace: tool.name, name: member.name });
    }
  }
  return index;
}

/** The client-facing name (and namespace, when the tool came from one) of a canonical call. */
export function clientToolName(name: string, index: ReadonlyMap<string, NamespacedName>): { name: string; namespace?: string } {
  const hit = index.get(name);
  return hit ? { name: hit.name, namespace: hit.namespace } : { name };
}
