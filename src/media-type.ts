/** The media type of a Content-Type value, lowercase, without parameters; `undefined` when there is none. */
function mediaType(contentType: unknown): string | undefined {
  if (typeof contentType !== 'string') return undefined;
  return contentType.split(';', 1)[0]?.trim().toLowerCase();
}

/** `application/json`, with or without parameters. Nothing else (text/plain, HTML, JWT responses) counts. */
export function isJsonMediaType(contentType: unknown): boolean {
  return mediaType(contentType) === 'application/json';
}

export function isEventStream(contentType: unknown): boolean {
  return mediaType(contentType) === 'text/event-stream';
}
