import net from "node:net";

/**
 * A TCP proxy to 127.0.0.1:`target` that can stall: while stalled, connections (old and new)
 * stay open and nothing is forwarded either way — a Redis that stopped answering without closing
 * anything (a paused process, a network path that drops packets) — until `resume` sends on what
 * was held. `sever` drops the connections open now without telling either end (a firewall that
 * forgot them): what they carry is lost for good, new connections go through.
 */
export async function stallingProxy(target: number) {
  let stalled = false;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const severed = new WeakSet<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on("data", (chunk) => {
      if (severed.has(from)) return;
      if (stalled) held.push(() => to.write(chunk));
      else to.write(chunk);
    });
  const server = net.createServer((client) => {
    const upstream = net.connect(target, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stall: () => void (stalled = true),
    resume: () => {
      stalled = false;
      for (const send of held.splice(0)) send();
    },
    sever: () => {
      for (const socket of sockets) severed.add(socket);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
