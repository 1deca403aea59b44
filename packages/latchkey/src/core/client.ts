/** Who did something and from where: what flows receive from the HTTP adapter in place of a request. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
  /**
   * The language the request was answered in (http/kit/request-language.ts), for a mail to someone
   * who has chosen none: a French signup gets its verification mail in French.
   */
  language?: string;
}
