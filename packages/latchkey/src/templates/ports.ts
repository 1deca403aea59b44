import type { Translator } from '../core/i18n/catalogs.js';

/**
 * Renders pages and emails by template name, in the reader's language (the translator's); a
 * project overrides a template by path (templates/renderer.ts).
 */
export interface TemplateRenderer {
  render(name: string, context: Record<string, unknown>, translator: Translator): string;
}
