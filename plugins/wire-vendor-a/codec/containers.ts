// Where a Responses request or answer names a code container (OpenAI keeps them per project, so
// under the host's shared key): code_interpreter's `container` id, the shell tool's and a
// shell_call's `container_reference`, and the container a code_interpreter_call ran in (auto mode
// reuses the container of a code_interpreter_call in the model's context, so such an item names
// one when the request has a tool that runs code).
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** A container id and where it lies under the tool or item (a JSON pointer's tail). */
export interface NamedContainer {
  id: string;
  at: string;
}

function referenced(environment: unknown): NamedContainer | null {
  return isObject(environment) && environment.type === 'container_reference' && nonEmpty(environment.container_id)
    ? { id: environment.container_id, at: '/environment/container_id' } : null;
}

/** The container a tool names: a code_interpreter's id (not `{type: "auto"}`), a shell tool's reference. */
export function toolContainer(tool: unknown): NamedContainer | null {
  if (!isObject(tool)) return null;
  if (tool.type === 'code_interpreter') return nonEmpty(tool.container) ? { id: tool.container, at: '/container' } : null;
  return tool.type === 'shell' ? referenced(tool.environment) : null;
}

/** The container an item ran in: a code_interpreter_call's container_id, a shell_call's reference. */
export function itemContainer(item: unknown): NamedContainer | null {
  if (!isObject(item)) return null;
  if (item.type === 'code_interpreter_call') return nonEmpty(item.container_id) ? { id: item.container_id, at: '/container_id' } : null;
  return item.type === 'shell_call' ? referenced(item.environment) : null;
}

/** Whether a tool runs code in a container: code_interpreter, or a shell whose environment is one. */
export function runsInContainer(tool: unknown): boolean {
  if (!isObject(tool)) return false;
  if (tool.type === 'code_interpreter') return true;
  const environment = tool.environment;
  return tool.type === 'shell' && isObject(environment) && (environment.type === 'container_auto' || environment.type === 'container_reference');
}
