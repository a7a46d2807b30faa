// A streamed frame's data as a stream decoder reads it. A frame that says nothing (a blank data
// line, or the [DONE] some servers end every stream with) is skipped; one that is not JSON may
// have carried output, so it is not skipped in silence: it throws, and the translated stream ends
// with an error saying a frame could not be read, rather than an answer with a hole in it.

/** The frame's JSON, or null for a frame that says nothing; throws for data that is not JSON. */
export function parseFrame<T>(data: string): T | null {
  try {
    return JSON.parse(data) as T;
  } catch (err) {
    const trimmed = data.trim();
    if (trimmed === '' || trimmed === '[DONE]') return null;
    throw err;
  }
}
