/**
 * The interactive API docs (/api/docs/, /_allauth/openapi.html): starts Swagger UI, served from
 * this site like this script, on the OpenAPI document the page's `data-document-url` names. No
 * build step and nothing inline: the page's Content-Security-Policy allows scripts, styles and
 * requests to this site only.
 *
 * "Try it out" sends the request from this page, so it carries the session cookie; a request that
 * changes something also gets the `X-CSRFToken` header, copied from the csrftoken cookie as any
 * front end of the site does. A token typed in "Authorize" (`Token <key>`, or an app session
 * token) is sent as its header instead.
 */
/* global document, location, SwaggerUIBundle */
(function () {
  'use strict';

  const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS', 'TRACE'];

  /** @param {string} name */
  function cookie(name) {
    for (const pair of document.cookie.split(';')) {
      const [key, ...value] = pair.trim().split('=');
      if (key === name) return decodeURIComponent(value.join('='));
    }
    return undefined;
  }

  /** @param {{ method?: string, headers: Record<string, string> }} request */
  function withCsrfToken(request) {
    const token = cookie('csrftoken');
    if (token !== undefined && !SAFE_METHODS.includes((request.method || 'GET').toUpperCase())) request.headers['X-CSRFToken'] = token;
    return request;
  }

  function start() {
    const root = document.getElementById('api-docs');
    if (!root) return;
    const documentUrl = root.getAttribute('data-document-url') || '';
    const mount = root.getAttribute('data-url-prefix') || '';
    // The document names the site's configured address (SITE_URL); the requests are sent to the
    // address this page was opened at, so that they stay same-origin and carry the session.
    fetch(documentUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then((response) => {
        if (!response.ok) throw new Error(`The OpenAPI document answered ${response.status}.`);
        return response.json();
      })
      .then((spec) => {
        spec.servers = [{ url: `${location.origin}${mount}` }];
        SwaggerUIBundle({
          spec,
          dom_id: '#api-docs',
          deepLinking: true,
          tryItOutEnabled: false,
          withCredentials: true,
          persistAuthorization: false,
          // Swagger UI would otherwise ask a validator on another site about the document.
          validatorUrl: null,
          requestInterceptor: withCsrfToken,
        });
      })
      .catch((error) => {
        root.textContent = String(error && error.message ? error.message : error);
      });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
