import type { Config } from "../config.js";

/** Absolute links for `urls` objects, from the configured public and app base URLs. */
export function makeUrls(config: Pick<Config, "publicUrl" | "appUrl">) {
  const api = (path: string) => `${config.publicUrl}/v1${path}`;
  const app = (path: string) => `${config.appUrl}${path}`;
  return {
    api,
    app,
    user: (id: string) => ({ location: api(`/users/${id}`) }),
    organization: (id: string) => ({
      location: api(`/orgs/${id}`),
      app: app(`/o/${id}`),
    }),
    collection: (id: string) => ({ location: api(`/collections/${id}`), app: app(`/collections/${id}`) }),
    space: (id: string) => ({ location: api(`/spaces/${id}`), app: app(`/s/${id}`) }),
  };
}
export type Urls = ReturnType<typeof makeUrls>;
