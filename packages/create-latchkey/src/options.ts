/**
 * The generation options, as cookiecutter-django names them, with their defaults and rules. The
 * choices are made once: `username_type` shapes the database schema, `use_drf` decides whether
 * the project has an API layer at all. `language_code` is the site's default language (Django's
 * LANGUAGE_CODE), which the settings file holds and the environment may override later.
 */

export type UsernameType = 'username' | 'email';

export interface ProjectOptions {
  projectName: string;
  /** The npm package name and the directory-friendly name, derived from the project's name. */
  projectSlug: string;
  description: string;
  authorName: string;
  domainName: string;
  email: string;
  usernameType: UsernameType;
  /** `use_drf=y`: session and token authentication for /api/, the users API and the headless API. */
  useDrf: boolean;
  /** LANGUAGE_CODE, as Django writes it: lower case, parts joined by '-' (`en-us`, `pt-br`). */
  languageCode: string;
  /**
   * LANGUAGES: the languages Latchkey ships catalogs for, and first, when neither the code nor its
   * general language is among them, the general language of `languageCode` (`it` for `it-ch`).
   */
  languages: readonly string[];
}

/** The languages Latchkey ships catalogs for, in its default LANGUAGES order (its docs/translations.md). */
export const SHIPPED_LANGUAGES: readonly string[] = ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'];

/** One question of the generator: its option name (as on cookiecutter's prompt), flag, and default. */
export interface OptionQuestion {
  name: string;
  flag: string;
  /** The default, given the answers so far (the slug follows the name). */
  defaultFrom(answers: Readonly<Record<string, string>>): string;
  /** What a person may answer, shown with the question and in errors; undefined when free text. */
  allowed?: string;
}

export const QUESTIONS: readonly OptionQuestion[] = [
  { name: 'project_name', flag: '--project-name', defaultFrom: () => 'My Awesome Project' },
  { name: 'project_slug', flag: '--project-slug', defaultFrom: (answers) => slugFrom(answers.project_name ?? '') },
  { name: 'description', flag: '--description', defaultFrom: (answers) => `${answers.project_name ?? 'A project'}: accounts and authentication by Latchkey.` },
  { name: 'author_name', flag: '--author-name', defaultFrom: () => 'Your Name' },
  { name: 'domain_name', flag: '--domain-name', defaultFrom: () => 'example.com' },
  { name: 'email', flag: '--email', defaultFrom: (answers) => `you@${answers.domain_name ?? 'example.com'}` },
  { name: 'username_type', flag: '--username-type', defaultFrom: () => 'username', allowed: 'username or email' },
  { name: 'language_code', flag: '--language-code', defaultFrom: () => 'en-us', allowed: 'a language code such as en-us, fr or pt-br' },
  { name: 'use_drf', flag: '--use-drf', defaultFrom: () => 'n', allowed: 'y for the API layer, anything else for none' },
];

/** The given answers, and every other option at its default (which may follow an earlier answer). */
export function withDefaults(given: Readonly<Record<string, string>>): Record<string, string> {
  const answers = { ...given };
  for (const question of QUESTIONS) answers[question.name] ??= question.defaultFrom(answers);
  return answers;
}

/** A refusal of an option's value: one line that names the option and what it allows. */
export class OptionError extends Error {}

/** "My Awesome Project!" -> "my-awesome-project": lower case, words joined by hyphens (an npm package name). */
export function slugFrom(projectName: string): string {
  return projectName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

const SLUG = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const EMAIL = /^[^\s@"<>]+@[^\s@"<>]+$/;
/** A language code as Django writes it (`en-us`, `pt-br`, `zh-hans`); `pt_BR` and `pt-BR` are read as `pt-br`, as Latchkey reads them. */
const LANGUAGE_CODE = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/;
/** Characters that would break out of the strings, comments and markup the values are written into. */
const UNSAFE_TEXT = /[\p{Cc}`"'\\<>%$]/u;

/** Checks every answer and turns them into options; throws an OptionError for the first bad one. */
export function optionsFrom(answers: Readonly<Record<string, string>>): ProjectOptions {
  const text = (name: string, maxLength: number): string => {
    const value = (answers[name] ?? '').trim();
    if (value === '') throw new OptionError(`${name} must not be empty.`);
    if (value.length > maxLength) throw new OptionError(`${name} must be at most ${maxLength} characters.`);
    if (UNSAFE_TEXT.test(value)) throw new OptionError(`${name} must not contain quotes, backslashes, <, >, %, $, backticks or control characters.`);
    return value;
  };
  const projectSlug = (answers.project_slug ?? '').trim();
  if (!SLUG.test(projectSlug) || projectSlug.length > 64) {
    throw new OptionError(
      `project_slug "${projectSlug}" is not allowed: use lower-case letters, digits and single hyphens, starting with a letter (at most 64 characters), e.g. my-awesome-project.`,
    );
  }
  const domainName = (answers.domain_name ?? '').trim().toLowerCase();
  if (!DOMAIN.test(domainName)) throw new OptionError(`domain_name "${domainName}" is not allowed: use a domain name such as example.com.`);
  const email = text('email', 254);
  if (!EMAIL.test(email)) throw new OptionError(`email "${email}" is not allowed: use an address such as you@example.com.`);
  const usernameType = (answers.username_type ?? '').trim();
  if (usernameType !== 'username' && usernameType !== 'email') {
    throw new OptionError(`username_type "${usernameType}" is not allowed: use username or email.`);
  }
  const languageCode = (answers.language_code ?? '').trim().toLowerCase().replace(/_/g, '-');
  if (!LANGUAGE_CODE.test(languageCode)) {
    throw new OptionError(`language_code "${(answers.language_code ?? '').trim()}" is not allowed: use a language code such as en-us, fr or pt-br.`);
  }
  return {
    projectName: text('project_name', 100),
    projectSlug,
    description: text('description', 300),
    authorName: text('author_name', 100),
    domainName,
    email,
    usernameType,
    // As the specification says: "y" selects the API layer, and any other value selects none.
    useDrf: (answers.use_drf ?? '').trim().toLowerCase() === 'y',
    languageCode,
    languages: languagesFor(languageCode),
  };
}

/**
 * LANGUAGES for a default language: Latchkey's shipped languages, which serve `languageCode` when
 * they hold it or its general language (`de` serves `de-at`); otherwise its general language comes
 * first (`it` for `it` and `it-ch`, `pt` for `pt-pt`), for the project to translate (README.md).
 */
export function languagesFor(languageCode: string): string[] {
  const general = languageCode.split('-')[0]!;
  if (SHIPPED_LANGUAGES.includes(languageCode) || SHIPPED_LANGUAGES.includes(general)) return [...SHIPPED_LANGUAGES];
  return [general, ...SHIPPED_LANGUAGES];
}
