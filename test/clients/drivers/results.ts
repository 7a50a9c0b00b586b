/** The first text item of a tools/call result, as every client shows it. */
export function firstText(result: unknown): string | undefined {
  const content = (result as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  const item = content.find((entry): entry is { type: 'text'; text: string } => (entry as { type?: unknown }).type === 'text');
  return item?.text;
}
