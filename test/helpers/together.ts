import net from "node:net";
import { expect } from "vitest";

/** An HTTP answer as read from the socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface TogetherRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
}

/** Reads one HTTP answer from `socket` (its body by its length; none for HEAD and 304). */
function answerOn(socket: net.Socket, method: string): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString().split("\r\n");
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]),
      );
      const status = Number(statusLine!.split(" ")[1]);
      const length = method === "HEAD" || status === 304 ? 0 : Number(headers["content-length"]);
      if (received.length < end + 4 + length) return;
      socket.off("data", onData);
      socket.off("error", reject);
      resolve({ status, headers, body: received.subarray(end + 4, end + 4 + length).toString() });
    };
    socket.on("data", onData);
    socket.once("error", reject);
  });
}

/**
 * Requests written together to the server at `url`, so that it reads them in the same turn of its
 * event loop: a connection each, opened and used once first (a server reads a new connection only
 * from the turn after it accepted it), then every request written in one go, with `token` unless
 * a request names its own authorization. Callers at `leave` hang up as soon as they wrote (their
 * answer is null).
 */
export async function writtenTogether(
  url: string,
  token: string,
  requests: TogetherRequest[],
  leave: (i: number) => boolean = () => false,
): Promise<(RawAnswer | null)[]> {
  const { port } = new URL(url);
  const sockets = await Promise.all(
    requests.map(async () => {
      const socket = await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(Number(port), "127.0.0.1", () => resolve(s));
        s.once("error", reject);
      });
      socket.write("GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      expect((await answerOn(socket, "GET")).status).toBe(200);
      return socket;
    }),
  );
  const answers = requests.map(({ method = "GET", path, headers = {} }, i) => {
    const socket = sockets[i]!;
    const head = Object.entries({ host: "127.0.0.1", authorization: `Bearer ${token}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    const answer = leave(i) ? null : answerOn(socket, method);
    socket.write(`${method} ${path} HTTP/1.1\r\n${head.join("")}\r\n`);
    if (!answer) socket.destroy();
    return answer;
  });
  try {
    return await Promise.all(answers);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}
