import { describe, expect, it } from 'vitest';
import { languagesFor, OptionError, optionsFrom, slugFrom, withDefaults } from './options.js';

const answersWith = withDefaults;

describe('the generation options', () => {
  it('derives the slug from the project name, as an npm package name', () => {
    expect(slugFrom('My Awesome Project')).toBe('my-awesome-project');
    expect(slugFrom('  Café   Crème! 2 ')).toBe('cafe-creme-2');
    expect(answersWith({ project_name: 'Ada Shop' }).project_slug).toBe('ada-shop');
  });

  it('takes the defaults: username login, no API layer, American English in Latchkey\'s seven languages', () => {
    expect(optionsFrom(answersWith({}))).toEqual({
      projectName: 'My Awesome Project',
      projectSlug: 'my-awesome-project',
      description: 'My Awesome Project: accounts and authentication by Latchkey.',
      authorName: 'Your Name',
      domainName: 'example.com',
      email: 'you@example.com',
      usernameType: 'username',
      useDrf: false,
      languageCode: 'en-us',
      languages: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'],
    });
  });

  it('writes language_code as Django does, and offers its language first when Latchkey ships neither it nor its general language', () => {
    expect(optionsFrom(answersWith({ language_code: ' pt_BR ' }))).toMatchObject({ languageCode: 'pt-br', languages: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'] });
    expect(optionsFrom(answersWith({ language_code: 'de-AT' }))).toMatchObject({ languageCode: 'de-at', languages: ['en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'] });
    expect(optionsFrom(answersWith({ language_code: 'it-ch' }))).toMatchObject({ languageCode: 'it-ch', languages: ['it', 'en', 'fr', 'de', 'es', 'pt-br', 'ja', 'ar'] });
    expect(languagesFor('zh-hans')[0]).toBe('zh');
    // European Portuguese is not Brazilian Portuguese: its own catalog, before pt-br.
    expect(languagesFor('pt-pt').slice(0, 1)).toEqual(['pt']);
    expect(languagesFor('fr')).toHaveLength(7);
  });

  it('selects the API layer with y only; any other use_drf selects none, as the specification says', () => {
    expect(optionsFrom(answersWith({ use_drf: 'y' })).useDrf).toBe(true);
    expect(optionsFrom(answersWith({ use_drf: 'Y' })).useDrf).toBe(true);
    for (const other of ['n', 'yes', 'no', '1']) expect(optionsFrom(answersWith({ use_drf: other })).useDrf).toBe(false);
  });

  it.each([
    [{ username_type: 'phone' }, 'username_type "phone" is not allowed: use username or email.'],
    [{ language_code: 'english' }, 'language_code "english" is not allowed: use a language code such as en-us, fr or pt-br.'],
    [{ language_code: "fr'); evil('" }, 'language_code "fr\'); evil(\'" is not allowed'],
    [{ language_code: '' }, 'language_code "" is not allowed'],
    [{ project_slug: 'My Project' }, 'project_slug "My Project" is not allowed: use lower-case letters, digits and single hyphens'],
    [{ project_slug: '1project' }, 'project_slug "1project" is not allowed'],
    [{ project_name: '!!!' }, 'project_slug "" is not allowed'],
    [{ project_name: "Ada's Shop", project_slug: 'ada-shop' }, 'project_name must not contain quotes'],
    [{ domain_name: 'localhost' }, 'domain_name "localhost" is not allowed: use a domain name such as example.com.'],
    [{ email: 'nobody' }, 'email "nobody" is not allowed'],
    [{ author_name: '   ' }, 'author_name must not be empty.'],
  ])('refuses %j with one line naming what is allowed', (overrides, message) => {
    expect(() => optionsFrom(answersWith(overrides))).toThrow(OptionError);
    expect(() => optionsFrom(answersWith(overrides))).toThrow(message);
  });
});
