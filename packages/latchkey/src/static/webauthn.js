/**
 * Security keys and passkeys on the account pages: the browser's side of a WebAuthn ceremony,
 * with no build step and nothing inline (the pages' Content-Security-Policy allows scripts from
 * this site only).
 *
 * A form marked `data-webauthn="create"` (a new key) or `data-webauthn="get"` (proving one) is
 * not posted as it is: on submit this script asks the page's `data-options-url` for the
 * ceremony's options (JSON, begun in the person's session at that moment), hands them to the
 * browser's navigator.credentials, puts the browser's answer, as JSON, in the form's hidden
 * `credential` field, and only then posts the form (CSRF token and all). Whatever goes wrong in
 * the browser (no WebAuthn, the person cancels, the key is already registered) is shown as the
 * form's error; whatever the server refuses comes back as the re-rendered form.
 *
 * The script translates nothing: the page gives each message it may show, already in the
 * reader's language, in the form's `data-error-*` attributes (mfa/webauthn/_ceremony.html), and
 * the English text here is only the fallback for a form without them.
 */
/* global document, window, location, HTMLFormElement, PublicKeyCredential */
(function () {
  'use strict';

  /** @param {string} text base64url, as the options carry binary values */
  function bytesOf(text) {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const binary = atob(base64 + '==='.slice((base64.length + 3) % 4));
    return Uint8Array.from(binary, (character) => character.charCodeAt(0));
  }

  /** @param {ArrayBuffer | null | undefined} buffer */
  function base64urlOf(buffer) {
    if (!buffer) return undefined;
    let binary = '';
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  /** @param {Array<{id: string}> | undefined} descriptors */
  function descriptorsOf(descriptors) {
    return (descriptors || []).map((descriptor) => Object.assign({}, descriptor, { id: bytesOf(descriptor.id) }));
  }

  // WebAuthn Level 3 parses the JSON options itself; older browsers get the same by hand.
  function creationOptionsOf(json) {
    if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function') return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    return Object.assign({}, json, {
      challenge: bytesOf(json.challenge),
      user: Object.assign({}, json.user, { id: bytesOf(json.user.id) }),
      excludeCredentials: descriptorsOf(json.excludeCredentials),
    });
  }

  function requestOptionsOf(json) {
    if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function') return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    return Object.assign({}, json, { challenge: bytesOf(json.challenge), allowCredentials: descriptorsOf(json.allowCredentials) });
  }

  /** The browser's answer as the server reads it (the shape of WebAuthn Level 3's toJSON()). */
  function answerOf(credential) {
    if (typeof credential.toJSON === 'function') return credential.toJSON();
    const response = credential.response;
    const answer = {
      id: credential.id,
      rawId: base64urlOf(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: { clientDataJSON: base64urlOf(response.clientDataJSON) },
    };
    if (response.attestationObject) {
      answer.response.attestationObject = base64urlOf(response.attestationObject);
      answer.response.transports = typeof response.getTransports === 'function' ? response.getTransports() : [];
    } else {
      answer.response.authenticatorData = base64urlOf(response.authenticatorData);
      answer.response.signature = base64urlOf(response.signature);
      answer.response.userHandle = base64urlOf(response.userHandle);
    }
    return answer;
  }

  /** A message for the person, rather than the browser's own wording. */
  class Refusal extends Error {}

  /**
   * The form's translation of one of its messages (`data-error-<name>`, read as dataset.error<Name>),
   * or the English text when the page gave none.
   * @param {HTMLFormElement} form @param {string} name @param {string} english
   */
  function textOf(form, name, english) {
    return form.dataset[name] || english;
  }

  function messageOf(form, error) {
    if (error instanceof Refusal) return error.message;
    if (error && error.name === 'InvalidStateError') return textOf(form, 'errorRegistered', 'This security key is already registered to your account.');
    if (error && error.name === 'NotAllowedError') return textOf(form, 'errorNotAllowed', 'The security key did not answer, or the request was cancelled. Please try again.');
    if (error && error.name === 'SecurityError') return textOf(form, 'errorInsecure', 'This site cannot use security keys at this address.');
    return textOf(form, 'errorFailed', 'Something went wrong with the security key. Please try again.');
  }

  function showError(form, message) {
    let list = form.querySelector('.lk-errors[data-webauthn-error]');
    if (!list) {
      list = document.createElement('ul');
      list.className = 'lk-errors';
      list.setAttribute('data-webauthn-error', '');
      list.setAttribute('role', 'alert');
      form.prepend(list);
    }
    const item = document.createElement('li');
    item.textContent = message;
    list.replaceChildren(item);
  }

  function clearError(form) {
    const list = form.querySelector('.lk-errors[data-webauthn-error]');
    if (list) list.remove();
  }

  async function fetchOptions(form) {
    const url = new URL(form.dataset.optionsUrl || form.action, location.href);
    const passwordless = form.querySelector('input[name="passwordless"]');
    if (passwordless && passwordless.checked) url.searchParams.set('passwordless', 'on');
    const response = await window.fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    const body = await response.json().catch(() => ({}));
    if (body.location) {
      window.location.assign(body.location);
      return undefined;
    }
    if (!response.ok) throw new Refusal(body.error || textOf(form, 'errorBegin', 'Could not begin. Please reload the page and try again.'));
    return body;
  }

  async function runCeremony(form) {
    if (!window.PublicKeyCredential || !navigator.credentials) throw new Refusal(textOf(form, 'errorUnsupported', 'This browser cannot use security keys or passkeys.'));
    const body = await fetchOptions(form);
    if (!body) return false;
    // The options come as { publicKey: <JSON> }, allauth's shape.
    const credential =
      form.dataset.webauthn === 'create'
        ? await navigator.credentials.create({ publicKey: creationOptionsOf(body.creation_options.publicKey) })
        : await navigator.credentials.get({ publicKey: requestOptionsOf(body.request_options.publicKey) });
    if (!credential) throw new Refusal(textOf(form, 'errorNoAnswer', 'The security key gave no answer. Please try again.'));
    form.elements.namedItem('credential').value = JSON.stringify(answerOf(credential));
    return true;
  }

  // A page restored from the back-forward cache after its form was posted is ready for another try.
  window.addEventListener('pageshow', () => {
    for (const form of document.querySelectorAll('form[data-webauthn]')) delete form.dataset.busy;
  });

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.webauthn) return;
    event.preventDefault();
    if (form.dataset.busy === 'true') return;
    form.dataset.busy = 'true';
    clearError(form);
    runCeremony(form).then(
      (ready) => {
        // HTMLFormElement.submit() posts without firing this listener again.
        if (ready) form.submit();
        else delete form.dataset.busy;
      },
      (error) => {
        delete form.dataset.busy;
        showError(form, messageOf(form, error));
      },
    );
  });
})();
