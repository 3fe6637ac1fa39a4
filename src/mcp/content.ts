import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';

/** One content block as text: text as it is, media and binary resources as a one-line description. */
export function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes]`;
    case 'resource_link':
      return `[resource link ${block.uri}${block.name ? ` "${block.name}"` : ''}]`;
    case 'resource': {
      const r = block.resource;
      return 'text' in r
        ? `[resource ${r.uri}]\n${r.text}`
        : `[resource ${r.uri}, ${r.mimeType ?? 'binary'}]`;
    }
    default:
      return JSON.stringify(block);
  }
}

/**
 * A tool result as the text a model reads: every block, then `structuredContent` as JSON when the blocks do not
 * already carry it (a server SHOULD mirror it in a text block; many do, and repeating it costs tokens).
 */
export function resultText(result: CallToolResult): string {
  const blocks = (result.content ?? []).map(renderBlock);
  const text = blocks.join('\n');
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!blocks.some((b) => b.trim() === json || safeEquals(b, result.structuredContent)))
      return text ? `${text}\n${json}` : json;
  }
  return text;
}

function safeEquals(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
