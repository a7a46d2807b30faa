// Azure's error bodies are OpenAI's ({"error": {"message", "code"}}), sometimes with an
// innererror: a prompt refused by the content filter names its categories there.
import type { RelayErrorBody } from '../../core/plugin-api.ts';
import { filteredCategories } from './content-filter.ts';

export function withFilterDetail(error: RelayErrorBody, body: string): RelayErrorBody {
  if (!body.includes('content_filter')) return error;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; innererror?: { content_filter_result?: unknown } } };
    if (parsed.error?.code !== 'content_filter') return error;
    const categories = filteredCategories(parsed.error.innererror?.content_filter_result);
    return categories.length > 0 ? { ...error, message: `${error.message} (filtered: ${categories.join(', ')})` } : error;
  } catch {
    return error;
  }
}
