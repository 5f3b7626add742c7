/** Who a request acts for: the user and token it was authenticated with. */
export interface Viewer {
  userId: string;
  tokenId: string;
  /** The SAML provider whose sign-in issued the token (organization-wide SSO, core/access/sso-enforce.ts). */
  ssoProvider?: string | null;
  /** A caller without a token, on the few routes that serve visitors; it is a member of nothing. */
  anonymous?: boolean;
  /**
   * A visitor of a published site holding its site token (core/access/site-token.ts): anonymous,
   * plus read access to the site's published structure and to the spaces it lists, nothing else.
   */
  content?: ContentGrant;
}

/** What a site token lets its holder read (the payload of the token, checked against the site). */
export interface ContentGrant {
  organization: string;
  site: string;
  siteSpace: string;
  space: string;
  siteSection?: string;
  /** The spaces of the site the visitor sees: the only spaces the token reads. */
  spaces: ReadonlySet<string>;
  shareKey?: string;
  /** The visitor's claims the token was minted with (adaptive content). */
  claims: Record<string, unknown>;
  /** Minted for a member previewing an unpublished site. */
  draft: boolean;
}

export const ANONYMOUS: Viewer = Object.freeze({ userId: "", tokenId: "", anonymous: true });
