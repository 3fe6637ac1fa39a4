import type { ContentBlock, ResourceContents } from '@modelcontextprotocol/client';

/**
 * What a user's message may carry besides what was typed: files (`@path` in the chat), resources (`@server:uri`)
 * and the resources a prompt embeds. The same bounds hold for all of them, so no attachment floods the context.
 */
export const MAX_ATTACHMENTS = 5;
/** Characters kept of each attachment's text; the rest is cut and the cut is said. */
export const MAX_ATTACHMENT_CHARS = 50_000;
/** Characters kept of a prompt's own text (the most the chat's input box holds: what a person could type). */
export const MAX_PROMPT_TEXT_CHARS = 100_000;

/** One piece of resource content as an attachment: text inlined (cut), binary said with its type and size. */
export function resourceAttachment(
  content: ResourceContents,
  attributes: Record<string, string> = {},
): { text: string; note: string } {
  const mime = content.mimeType;
  if ('text' in content && typeof content.text === 'string') {
    const cut = content.text.length > MAX_ATTACHMENT_CHARS;
    const attrs = attributeText({
      ...attributes,
      uri: content.uri,
      ...(mime ? { mimeType: mime } : {}),
      ...(cut ? { cut_at: String(MAX_ATTACHMENT_CHARS) } : {}),
    });
    return {
      text: `<resource${attrs}>\n${enclosed('resource', cut ? content.text.slice(0, MAX_ATTACHMENT_CHARS) : content.text)}\n</resource>`,
      note: `attached ${content.uri}${cut ? ` (first ${MAX_ATTACHMENT_CHARS} characters)` : ''}`,
    };
  }
  const blob = 'blob' in content && typeof content.blob === 'string' ? content.blob : '';
  const size = `${mime ?? 'binary'}, ${Buffer.byteLength(blob, 'base64')} bytes`;
  return {
    text: `[resource ${content.uri}: ${size}, binary, not inlined]`,
    note: `${content.uri} is binary (${size}): noted, not inlined`,
  };
}

/**
 * An attachment's text as it goes between `<tag>` and `</tag>`: a closing tag of that name inside it is written
 * `<\/tag`, so a server's resource (or a file) cannot end its attachment early and go on as if the user wrote it.
 */
export function enclosed(tag: string, text: string): string {
  return text.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1');
}

/** A prompt message's media block (image, audio) as a line saying what it was; never inlined. */
export function mediaNote(block: Extract<ContentBlock, { type: 'image' | 'audio' }>): string {
  return `[${block.type} ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes: not inlined]`;
}

/** ` key="value"` pairs, the values escaped for an XML-ish attribute. */
export function attributeText(attributes: Record<string, string>): string {
  return Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeAttribute(value)}"`)
    .join('');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/\n/g, ' ');
}
