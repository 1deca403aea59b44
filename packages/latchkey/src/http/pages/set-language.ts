/**
 * POST /i18n/setlang/ (Django's set_language): the language switch of every page. It takes
 * `language` and `next` (and the CSRF field, checked like every form), sets the language cookie,
 * stores the choice on the account when someone is signed in, and goes back to `next` when that
 * is a safe target, else to the site's root. A language the site does not offer changes nothing.
 */
import type { FastifyInstance } from 'fastify';
import { chooseLanguage, offeredLanguage } from '../../account/flows/choose-language.js';
import type { HttpContext } from '../kit/context.js';
import { formFields } from '../kit/html-page.js';
import { LANGUAGE_COOKIE, LANGUAGE_COOKIE_AGE } from '../kit/request-language.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { redirect } from './page.js';

export function registerSetLanguagePage(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls, settings, adapter } = ctx.deps;
  scope.post(urls.route('set_language'), async (request, reply) => {
    const form = formFields(request.body, ['language', 'next']);
    const language = offeredLanguage(ctx.deps, form.language);
    if (language !== undefined) {
      reply.setCookie(LANGUAGE_COOKIE, language, { path: '/', httpOnly: true, sameSite: 'lax', secure: settings.SESSION_COOKIE_SECURE, maxAge: LANGUAGE_COOKIE_AGE });
      const user = await ctx.sessions.currentUser(request);
      if (user) await chooseLanguage(ctx.deps, user, language);
    }
    return redirect(reply, redirectTargetOr(adapter, form.next, '/'));
  });
}
