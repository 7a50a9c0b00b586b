/** The media type of a Content-Type value, lowercase, without parameters; `undefined` when there is none. */
function mediaType(contentType: unknown): string | undefined {
  if (typeof contentType !== 'string') return undefined;
  return contentType.split(';', 1)[0]?.trim().toLowerCase();
}

const JSON_TYPE = 'application/json';
const EVENT_STREAM_TYPE = 'text/event-stream';

/** `application/json`, with or without parameters. Nothing else (text/plain, HTML, JWT responses) counts. */
export function isJsonMediaType(contentType: unknown): boolean {
  // The exact common spelling first: no splitting or case folding on every request.
  return contentType === JSON_TYPE || mediaType(contentType) === JSON_TYPE;
}

export function isEventStream(contentType: unknown): boolean {
  return contentType === EVENT_STREAM_TYPE || mediaType(contentType) === EVENT_STREAM_TYPE;
}
