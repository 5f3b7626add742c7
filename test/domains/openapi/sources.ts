import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A local HTTP server of OpenAPI source documents: valid, invalid, slow, large, missing. */
export const PETSTORE_YAML = `openapi: 3.0.3
info:
  title: Petstore
  version: 1.0.0
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        "200":
          description: The pets.
`;

export const PETSTORE_V2_YAML = PETSTORE_YAML.replace("version: 1.0.0", "version: 2.0.0").replace(
  "paths:\n",
  `paths:
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - name: petId
          in: path
          required: true
          schema: { type: string }
      responses:
        "200":
          description: A pet.
`,
);

export const SWAGGER_JSON = JSON.stringify({
  swagger: "2.0",
  info: { title: "Legacy", version: "1" },
  paths: { "/things": { get: { responses: { "200": { description: "ok" } } } } },
});

export const OPENAPI_31_JSON = JSON.stringify({
  openapi: "3.1.0",
  info: { title: "Modern", version: "1" },
  paths: { "/hello": { get: { responses: { "200": { description: "Hi." } } } } },
  components: { schemas: { Greeting: { type: ["string", "null"] } } },
});

/** Parses as YAML but is not a valid OpenAPI document (info.version and responses missing). */
export const INVALID_SPEC_YAML = `openapi: 3.0.3
info:
  title: Broken
paths:
  /pets:
    get: {}
`;

export const NOT_YAML = `openapi: 3.0.3\ninfo: [unclosed\n  title: {{ nope`;

export interface Sources {
  url: string;
  /** Serves `body` at `path` from now on (e.g. to fix a document). */
  set(path: string, body: string, contentType?: string): void;
  hits(path: string): number;
  close(): Promise<void>;
}

export async function startSources(): Promise<Sources> {
  const docs = new Map<string, { body: string; type: string }>([
    ["/petstore.yaml", { body: PETSTORE_YAML, type: "application/yaml" }],
    ["/swagger.json", { body: SWAGGER_JSON, type: "application/json" }],
    ["/modern.json", { body: OPENAPI_31_JSON, type: "application/json" }],
    ["/invalid-spec.yaml", { body: INVALID_SPEC_YAML, type: "application/yaml" }],
    ["/not-yaml.yaml", { body: NOT_YAML, type: "application/yaml" }],
    ["/scalar.yaml", { body: "just a string", type: "application/yaml" }],
  ]);
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (path === "/hang") return; // never answers
    if (path === "/slow-body") {
      // Headers at once, then the body trickles slower than any timeout.
      res.writeHead(200, { "content-type": "application/yaml" });
      res.write("openapi: 3.0.3\n");
      return;
    }
    if (path === "/huge") {
      // No content-length: the limit must hold while streaming.
      res.writeHead(200, { "content-type": "application/yaml" });
      const line = "# " + "x".repeat(1000) + "\n";
      let sent = 0;
      const pump = () => {
        while (sent < 200) {
          sent++;
          if (!res.write(line)) return res.once("drain", pump);
        }
        res.end();
      };
      return pump();
    }
    if (path === "/huge-declared") {
      const body = "#".repeat(200_000);
      res.writeHead(200, { "content-type": "application/yaml", "content-length": String(body.length) });
      return res.end(body);
    }
    if (path === "/redirect") {
      res.writeHead(302, { location: "/petstore.yaml" });
      return res.end();
    }
    const doc = docs.get(path);
    if (!doc) {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("not found");
    }
    res.writeHead(200, { "content-type": doc.type });
    res.end(doc.body);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set: (path, body, type = "application/yaml") => void docs.set(path, { body, type }),
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
