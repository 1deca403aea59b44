/**
 * A person's choice of language (the switch on every page, Django's set_language): kept on the
 * account, so that their pages on any browser and every mail sent to them, now or later, by the
 * outbox, the admin or the CLI, are in it (docs/translations.md).
 */
import type { LatchkeyDeps } from '../../deps.js';
import { supportedVariant } from '../../core/i18n/languages.js';
import type { User } from '../model.js';

/**
 * The offered language `requested` names (`pt-BR` reads as `pt-br`), or undefined for anything the
 * site does not offer: as Django's set_language, an unknown code changes nothing.
 */
export function offeredLanguage(deps: Pick<LatchkeyDeps, 'settings'>, requested: string): string | undefined {
  const variant = supportedVariant(requested, deps.settings.LANGUAGES);
  // Only the code itself or its exact spelling: `de-at` must not quietly store `de`.
  return variant !== undefined && variant === requested.trim().toLowerCase().replace(/_/g, '-') ? variant : undefined;
}

/** Stores `language` (an offered code, from offeredLanguage) as the user's choice. */
export async function chooseLanguage(deps: Pick<LatchkeyDeps, 'store'>, user: User, language: string): Promise<void> {
  if (user.language !== language) await deps.store.users.update(user.id, { language });
}
