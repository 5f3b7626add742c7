import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, createSpace, type Admin } from "../../helpers/fixtures.js";

/** A 1×1 PNG (68 bytes), and the same image padded past this gateway's file limit. */
const PIXEL = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
const BIG = Buffer.concat([PIXEL, Buffer.alloc(400, 7)]);
const MAX_FILE_BYTES = 200;

let t: TestGateway;
let admin: Admin;
let site: http.Server;
let base: string;
const requests: string[] = [];

beforeAll(async () => {
  t = await startGateway({ maxFileBytes: MAX_FILE_BYTES });
  ({ admin } = await acmeDocs(t));
  site = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    requests.push(path);
    const images: Record<string, [string, Buffer]> = {
      "/img/pixel.png": ["image/png", PIXEL],
      "/assets/same-pixel.png": ["image/png", PIXEL],
      "/img/big.png": ["image/png", BIG],
      "/img/not-an-image.png": ["text/plain", Buffer.from("hello")],
    };
    const image = images[path];
    if (image) return void res.writeHead(200, { "content-type": image[0] }).end(image[1]);
    if (path === "/docs/") {
      return void res.writeHead(200, { "content-type": "text/html" }).end(
        `<html><body><main><h1>Home</h1><p><img src="/img/pixel.png" alt="Pixel"> <img src="../assets/same-pixel.png" alt="Again">
         <img src="/img/big.png" alt="Big"> <img src="/img/not-an-image.png" alt="Text"> <img src="/img/missing.png" alt="Missing">
         <img src="data:image/png;base64,${PIXEL.toString("base64")}" alt="Inline"></p><p><a href="guide.html">Guide</a></p></main></body></html>`,
      );
    }
    if (path === "/docs/guide.html") {
      return void res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<html><body><h1>Guide</h1><img src="/img/pixel.png" alt="Pixel"></body></html>`);
    }
    if (path === "/refused.html") {
      return void res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<html><body><h1>Inside</h1><img src="http://10.0.0.1/secret.png" alt="Secret"></body></html>`);
    }
    if (path === "/notes.md") {
      return void res.writeHead(200, { "content-type": "text/markdown" }).end(`# Notes\n\n![Pixel](${base}/img/pixel.png "A pixel")\n`);
    }
    res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => site.close(() => resolve()));
  await t?.close();
});

describe("website import brings images in as files of the space", () => {
  it("downloads each image once, stores the same bytes once, and points the pages at the files", async () => {
    const space = await createSpace(admin, admin.organization, { title: "Imported" });
    const res = await admin.post(`/v1/spaces/${space.id}/content/import`, { url: `${base}/docs/`, source: "website" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.importedResources).toBe(2);

    // One file for the two addresses of the same pixel; the oversized image, the text served
    // as .png, the missing one and the inline data are not files.
    const files = (await admin.get(`/v1/spaces/${space.id}/content/files`)).body.items;
    expect(files).toHaveLength(1);
    const [file] = files;
    expect(file).toMatchObject({ name: "pixel.png", contentType: "image/png", size: PIXEL.length, dimensions: { width: 1, height: 1 } });
    expect(requests.filter((p) => p === "/img/pixel.png")).toHaveLength(1); // fetched once for both pages

    const download = await fetch(`${t.url}/v1/spaces/${space.id}/content/files/${file.id}/download`, {
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(PIXEL)).toBe(true);

    const [home] = (await admin.get(`/v1/spaces/${space.id}/content/pages`)).body.pages;
    const link = `/v1/spaces/${space.id}/content/files/${file.id}/download`;
    expect(home.markdown).toContain(`![Pixel](${link})`);
    expect(home.markdown).toContain(`![Again](${link})`);
    expect(home.markdown).toContain(`![Big](${base}/img/big.png)`);
    expect(home.markdown).toContain(`![Text](${base}/img/not-an-image.png)`);
    expect(home.markdown).toContain(`![Missing](${base}/img/missing.png)`);
    expect(home.pages[0].markdown).toContain(`![Pixel](${link})`);
    // The references resolve to the file: no broken link.
    expect((await admin.get(`/v1/spaces/${space.id}/links`, { status: "broken" })).body.count).toBe(0);

    // Imported again (and from markdown): still one file, the one the space holds.
    await admin.post(`/v1/spaces/${space.id}/content/import`, { url: `${base}/docs/`, source: "website" });
    const md = await admin.post(`/v1/spaces/${space.id}/content/import`, { url: `${base}/notes.md`, source: "markdown" });
    expect(md.status).toBe(201);
    expect((await admin.get(`/v1/spaces/${space.id}/content/files`)).body.items.map((f: any) => f.id)).toEqual([file.id]);
    const notes = (await admin.get(`/v1/spaces/${space.id}/content/pages`)).body.pages.find((p: any) => p.title === "Notes");
    expect(notes.markdown).toBe(`![Pixel](${link} "A pixel")\n`);
  });

  it("keeps image links when the outbound policy refuses their address", async () => {
    const space = await createSpace(admin, admin.organization, { title: "Refused" });
    // The page's server is allowed; its image points at a private address the policy refuses.
    const res = await admin.post(`/v1/spaces/${space.id}/content/import`, { url: `${base}/refused.html`, source: "html" });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await admin.get(`/v1/spaces/${space.id}/content/files`)).body.count).toBe(0);
    const [page] = (await admin.get(`/v1/spaces/${space.id}/content/pages`)).body.pages;
    expect(page.markdown).toContain("![Secret](http://10.0.0.1/secret.png)");
  });
});
