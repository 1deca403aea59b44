/**
 * The browser's side of a WebAuthn ceremony (security keys and passkeys). The API hands out the
 * options as JSON under `{ publicKey: ... }` (allauth's shape, ready for
 * PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON), and takes the
 * browser's answer back as JSON (credential.toJSON()). Browsers without those WebAuthn Level 3
 * methods get the same conversions by hand: binary values travel as base64url.
 */
/* global window, PublicKeyCredential */

/** @param {string} text base64url */
function bytesOf(text) {
  const base64 = String(text).replace(/-/g, '+').replace(/_/g, '/');
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

function descriptorsOf(descriptors) {
  return (descriptors ?? []).map((descriptor) => ({ ...descriptor, id: bytesOf(descriptor.id) }));
}

function creationOptionsOf(json) {
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function') return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  return { ...json, challenge: bytesOf(json.challenge), user: { ...json.user, id: bytesOf(json.user.id) }, excludeCredentials: descriptorsOf(json.excludeCredentials) };
}

function requestOptionsOf(json) {
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function') return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  return { ...json, challenge: bytesOf(json.challenge), allowCredentials: descriptorsOf(json.allowCredentials) };
}

/** The browser's answer as the API reads it: WebAuthn Level 3's toJSON(), or the same by hand. */
function answerOf(credential) {
  if (typeof credential.toJSON === 'function') return credential.toJSON();
  const { response } = credential;
  const answer = {
    id: credential.id,
    rawId: base64urlOf(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
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

/** A failure worded for the person, rather than the browser's own message. */
export class CeremonyError extends Error {}

function ceremonyError(error) {
  if (error instanceof CeremonyError) return error;
  if (error?.name === 'InvalidStateError') return new CeremonyError('This security key is already registered to your account.');
  if (error?.name === 'NotAllowedError') return new CeremonyError('The security key did not answer, or the request was cancelled. Please try again.');
  if (error?.name === 'SecurityError') return new CeremonyError('This site cannot use security keys at this address.');
  return new CeremonyError('Something went wrong with the security key. Please try again.');
}

function supported() {
  if (!window.PublicKeyCredential || !navigator.credentials) throw new CeremonyError('This browser cannot use security keys or passkeys.');
}

/**
 * Makes a new credential from `creation_options` (`{ publicKey }`) and resolves to its JSON.
 * Rejects with a CeremonyError a person can read (cancelled, already registered, ...).
 */
export async function createCredential(creationOptions) {
  try {
    supported();
    const credential = await navigator.credentials.create({ publicKey: creationOptionsOf(creationOptions.publicKey) });
    if (!credential) throw new CeremonyError('The security key gave no answer. Please try again.');
    return answerOf(credential);
  } catch (error) {
    throw ceremonyError(error);
  }
}

/** Proves a credential with `request_options` (`{ publicKey }`) and resolves to the assertion's JSON. */
export async function getCredential(requestOptions) {
  try {
    supported();
    const credential = await navigator.credentials.get({ publicKey: requestOptionsOf(requestOptions.publicKey) });
    if (!credential) throw new CeremonyError('The security key gave no answer. Please try again.');
    return answerOf(credential);
  } catch (error) {
    throw ceremonyError(error);
  }
}
