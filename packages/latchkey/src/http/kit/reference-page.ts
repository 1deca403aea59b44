/**
 * Escaping for the HTML Latchkey writes without a template (the error pages, the interactive API
 * docs' page around Swagger UI): whatever a setting or a message says, it is text, never markup.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
