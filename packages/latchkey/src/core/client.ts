/** Who did something and from where: what flows receive from the HTTP adapter in place of a request. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
}
