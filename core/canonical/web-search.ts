// The upstream's own web search (canonical WebSearchTool and WebSearchCallPart) on upstreams that
// have none (Chat Completions, Converse, Gemini): the tool and the searches of the history are
// left out and named in x-relay-dropped, never sent as something else.
import type { CustomTool, FunctionTool, Tool, WebSearchTool } from './types.ts';

/** The x-relay-dropped name of a web search tool the upstream cannot run. */
export const WEB_SEARCH_TOOL_NAME = 'tools.web_search';
/** The x-relay-dropped name of a web search of the history the upstream cannot be sent. */
export const WEB_SEARCH_HISTORY_NAME = 'history.web_search_call';

/** The function and custom tools of `tools`; a web search among them is named in `dropped`. */
export function functionTools(tools: readonly Tool[] | undefined, dropped: string[]): Array<FunctionTool | CustomTool> {
  const out: Array<FunctionTool | CustomTool> = [];
  for (const tool of tools ?? []) {
    if (tool.type === 'web_search') dropped.push(WEB_SEARCH_TOOL_NAME);
    else out.push(tool);
  }
  return out;
}

/** The request's web search tool, if it has one. */
export function webSearchTool(tools: readonly Tool[] | undefined): WebSearchTool | undefined {
  return tools?.find((t): t is WebSearchTool => t.type === 'web_search');
}
