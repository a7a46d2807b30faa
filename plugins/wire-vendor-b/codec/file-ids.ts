// File ids in Messages JSON: a code execution result lists the files its code wrote
// (`{type: "bash_code_execution_output", file_id}`, in Anthropic's Files API under the key that
// ran it), and a request names a file by `file_id` (a document's or image's `source: {type:
// "file"}`, a `container_upload` block, or such a result replayed from the history).
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface NamedFile {
  id: string;
  /** Where it is named: a JSON pointer. */
  field: string;
}

/**
 * Every string `file_id` under `value`, with its pointer from `at`. Walked with a stack of its
 * own: a body nested thousands deep must not overflow the call stack.
 */
export function fileIdsIn(value: unknown, at: string): NamedFile[] {
  const found: NamedFile[] = [];
  const stack: Array<[unknown, string]> = [[value, at]];
  while (stack.length > 0) {
    const [node, pointer] = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${pointer}/${i}`]);
    } else if (isObject(node)) {
      for (const [key, child] of Object.entries(node)) {
        const path = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        if (key === 'file_id' && typeof child === 'string' && child !== '') found.push({ id: child, field: path });
        else if (child !== null && typeof child === 'object') stack.push([child, path]);
      }
    }
  }
  return found;
}

/** The files a code execution result block (`*code_execution_tool_result`) says its code wrote. */
export function writtenFiles(block: unknown): string[] {
  if (!isObject(block) || typeof block.type !== 'string' || !block.type.endsWith('code_execution_tool_result')) return [];
  const result = block.content;
  const outputs = isObject(result) && Array.isArray(result.content) ? result.content : [];
  return outputs.filter(isObject).map((o) => o.file_id).filter((id): id is string => typeof id === 'string' && id !== '');
}
