import { AuthorizationResponseError, OperationProcessingError, validateAuthResponse } from 'oauth4webapi';
import type { AuthorizationServerFound } from './discovery.js';

/** What the authorization server sent back to the redirect URI, once checked. `code` is a credential: never printed. */
export interface AuthorizationResponse {
  readonly code: string;
}

/** Error codes are RFC 6749 §4.1.2.1 ASCII tokens; anything else from the query is not repeated. */
const ERROR_CODE = /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/;

/**
 * Why a response was refused, in words that quote nothing from it but a well-formed error code. Not chained to
 * oauth4webapi's error: its `cause` holds the response parameters, the code among them.
 */
function refusal(error: unknown, issuer: string): unknown {
  if (error instanceof AuthorizationResponseError) {
    return new Error(`the authorization server refused: ${ERROR_CODE.test(error.error) ? error.error : '(unprintable error code)'}`);
  }
  if (error instanceof OperationProcessingError) {
    const about = error.message.includes('"iss"') ? ` (the issuer is ${issuer}; RFC 9207 §2.4: a response from another server is not redeemed)` : '';
    return new Error(`the authorization response was refused: ${error.message}${about}`);
  }
  return error;
}

/**
 * Checks one authorization response (the redirect's query) with oauth4webapi: the `state` sent, `iss` (RFC 9207
 * §2.4) identical, by simple string comparison, to the issuer of the server's metadata whenever present, and
 * required when the metadata says `authorization_response_iss_parameter_supported`, so a response from another
 * authorization server (a mix-up) is never redeemed here; an `error` response is refused; a response without a code
 * too. Without metadata (the 2025-03-26 fallback) there is no issuer to compare a present `iss` with, so it is not
 * checked. Messages never quote the code or anything else from the response but a well-formed error code.
 */
export function checkAuthorizationResponse(server: AuthorizationServerFound, clientId: string, state: string, parameters: URLSearchParams): AuthorizationResponse {
  const checked = new URLSearchParams(parameters);
  if (server.metadata === undefined) checked.delete('iss');
  const issuer = server.metadata?.issuer ?? server.server;
  try {
    validateAuthResponse({ ...server.metadata, issuer }, { client_id: clientId }, checked, state);
  } catch (error) {
    throw refusal(error, issuer);
  }
  const code = parameters.get('code');
  if (code === null || code === '') throw new Error('the authorization response carries no code');
  return { code };
}
