/** Who a request acts for: the user and token it was authenticated with. */
export interface Viewer {
  userId: string;
  tokenId: string;
  /** The SAML provider whose sign-in issued the token (organization-wide SSO, core/access/sso-enforce.ts). */
  ssoProvider?: string | null;
  /** A caller without a token, on the few routes that serve visitors; it is a member of nothing. */
  anonymous?: boolean;
}

export const ANONYMOUS: Viewer = Object.freeze({ userId: "", tokenId: "", anonymous: true });
